/* fjdict --lint: checks the curated tables of data/context (see lint.c). */
#ifndef FJ_LINT_H
#define FJ_LINT_H

/* Compiles an image from OpenCC's data, a word list and a curated directory,
 * as fjdict --compile does; 0 on success. */
typedef int (*lint_build_fn)(const char *data_dir, const char *image_path,
                             const char *essay_path, const char *curated_dir);

/* fjdict --lint DIR [--data OPENCC_DATA_DIR --essay FILE]: args are the words
 * after --lint. Refuses conflicting entries (exit status 1), prints the count
 * of entries per file; with --data and --essay also warns of s2t.tsv and
 * t2s.tsv entries that change nothing, building images with `build`. */
int lint_main(int argc, char **argv, lint_build_fn build);

#endif
