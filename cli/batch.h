/* fanjian CLI: converting a whole directory tree on every core. */
#ifndef FANJIAN_CLI_BATCH_H
#define FANJIAN_CLI_BATCH_H

#include "convert.h"

typedef struct fjx_batch {
    const fjx_settings *settings;
    const char *root;    /* the tree to convert */
    const char *out_dir; /* where the converted tree goes, or NULL with in_place */
    int in_place;        /* replace each file (atomically) */
    int rename_files;    /* convert file and directory names too */
    int jobs;            /* worker threads (0: one per online core) */
    int progress;        /* 1: progress bar on stderr, 0: none, -1: when stderr is a terminal */
    int sync;            /* fsync each file before it replaces the old one */
} fjx_batch;

/* Converts every file whose format is known (by extension, or all files
 * when settings->format is set); with out_dir, other files are copied.
 * Reports each failure, then one summary line. 0 when every file
 * succeeded, 1 when some failed (a file changed since it was listed, a
 * new name already taken: both kept), 2 when the tree could not be read,
 * the output directory is inside it, or a symbolic link is in the way of
 * an output directory. Nothing below the root or out_dir is followed
 * through a symbolic link. */
int fjx_batch_run(const fjx_batch *b);

#endif
