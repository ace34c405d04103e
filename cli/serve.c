/* STUB: replaced by the HTTP service. */
#include <stdio.h>
#include "serve.h"
int fjx_serve_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "fanjian: serve: not built\n");
    return 1;
}
