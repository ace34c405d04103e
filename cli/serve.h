/* fanjian CLI: `fanjian serve`, the HTTP service and its web page. */
#ifndef FANJIAN_CLI_SERVE_H
#define FANJIAN_CLI_SERVE_H

/* argv[0] is "serve"; returns the process exit status. */
int fjx_serve_main(int argc, char **argv);

#endif
