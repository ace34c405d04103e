/* fjdict: compiles OpenCC's text dictionaries and configs into one fanjian
 * dictionary image, and gives the source dictionaries back (--decompile). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../include/fanjian.h"
#include "../src/image_format.h"
#include "../src/internal.h"
#include "../src/utf8.h"
#include "kenlm.h"
#include "lm.h"
#include "lint.h"
#include "chewing.h"
#include "model.h"
#include "../formats/ocdata.h"
#include "../formats/ocimage.h"

/* ---- writing ----------------------------------------------------------- */

/* A file written beside its final name and renamed over it when complete:
 * whoever has the old file open or mapped (a running `fanjian serve`) keeps
 * its inode unchanged, and a failed write leaves the old file in place. */
typedef struct replacing_file {
    FILE *f;
    char tmp[4096];
} replacing_file;

static int replacing_open(replacing_file *r, const char *path)
{
    /* The same directory (so rename replaces in place), and a short name
     * (so a final name near NAME_MAX still works). One temporary at a time:
     * each is renamed or removed before the next is made. */
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path) : 1;
    int n = snprintf(r->tmp, sizeof r->tmp, "%.*s/.fjdict-%ld.tmp", dir_len,
                     slash ? path : ".", (long)getpid());
    if (n < 0 || (size_t)n >= sizeof r->tmp) {
        fprintf(stderr, "fjdict: %s: path too long\n", path);
        return -1;
    }
    int fd = open(r->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 || !(r->f = fdopen(fd, "wb"))) {
        fprintf(stderr, "fjdict: cannot create %s: %s\n", r->tmp, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(r->tmp);
        }
        return -1;
    }
    return 0;
}

static void replacing_abandon(replacing_file *r)
{
    fclose(r->f);
    unlink(r->tmp);
}

/* Flushes the data to disk before the rename, so a crash leaves the old
 * file or the whole new one, never a short one under the final name. */
static int replacing_commit(replacing_file *r, const char *path)
{
    int failed = fflush(r->f) != 0 || ferror(r->f) || fsync(fileno(r->f)) != 0;
    int saved = errno;
    if (fclose(r->f) != 0 && !failed) {
        failed = 1;
        saved = errno;
    }
    if (failed) {
        fprintf(stderr, "fjdict: cannot write %s: %s\n", r->tmp, strerror(saved));
        unlink(r->tmp);
        return -1;
    }
    if (rename(r->tmp, path) != 0) {
        fprintf(stderr, "fjdict: cannot rename %s to %s: %s\n", r->tmp, path, strerror(errno));
        unlink(r->tmp);
        return -1;
    }
    return 0;
}

static int write_image(const char *path, const oci_section *secs, uint32_t nsec)
{
    size_t len;
    unsigned char *img = oci_assemble(secs, nsec, &len);
    replacing_file out;
    if (replacing_open(&out, path) != 0) {
        free(img);
        return -1;
    }
    if (fwrite(img, 1, len, out.f) != len) {
        fprintf(stderr, "fjdict: cannot write %s: %s\n", out.tmp, strerror(errno));
        replacing_abandon(&out);
        free(img);
        return -1;
    }
    if (replacing_commit(&out, path) != 0) {
        free(img);
        return -1;
    }
    printf("fjdict: wrote %s (%zu bytes)\n", path, len);
    free(img);
    return 0;
}

/* RECS: the per-character records of every matcher that is a conversion
 * step, made by the library from the image itself, exactly as a converter
 * would build them without the table. The last section (secs[nsec - 1]) is
 * RECS; the matchers' `records` are set. NULL on failure (reported). */
static uint64_t *step_records(oci_builder *b, oci_section *secs, uint32_t nsec,
                              const fj_profile_rec *profiles, size_t profile_count)
{
    size_t len;
    for (size_t i = 0; i < b->matcher_count; i++)
        b->matchers[i].records = FJ_NONE;
    unsigned char *draft = oci_assemble(secs, nsec, &len);
    uint32_t *table_of = malloc(b->matcher_count * sizeof *table_of);
    fj_dict *dict = NULL;
    fj_error err = {0};
    uint64_t *records = NULL;
    uint32_t tables = 0;
    if (!draft || !table_of) {
        fprintf(stderr, "fjdict: out of memory\n");
        goto done;
    }
    if (fj_dict_open_memory(draft, len, NULL, &dict, &err) != FJ_OK) {
        fprintf(stderr, "fjdict: the image without its records: %s\n", err.message);
        goto done;
    }
    for (size_t i = 0; i < b->matcher_count; i++)
        table_of[i] = FJ_NONE;
    for (size_t i = 0; i < profile_count; i++)
        for (uint32_t k = 0; k < profiles[i].stage_count; k++)
            if (table_of[profiles[i].stages[k]] == FJ_NONE)
                table_of[profiles[i].stages[k]] = tables++;
    records = malloc(((size_t)tables ? tables : 1) * FJ_REC_COUNT * sizeof *records);
    if (!records) {
        fprintf(stderr, "fjdict: out of memory\n");
        goto done;
    }
    for (uint32_t id = 0; id < b->matcher_count; id++) {
        if (table_of[id] == FJ_NONE)
            continue;
        if (fj__matcher_build_records(dict, id, records + (size_t)table_of[id] * FJ_REC_COUNT,
                                      &err) != FJ_OK) {
            fprintf(stderr, "fjdict: records of matcher %u: %s\n", id, err.message);
            free(records);
            records = NULL;
            goto done;
        }
    }
    for (uint32_t id = 0; id < b->matcher_count; id++)
        b->matchers[id].records = table_of[id];
    secs[nsec - 1].data = records;
    secs[nsec - 1].size = (size_t)tables * FJ_REC_COUNT * sizeof *records;
    printf("fjdict: %u record tables (%zu bytes)\n", tables, secs[nsec - 1].size);
done:
    fj_dict_close(dict);
    free(draft);
    free(table_of);
    return records;
}

/* Does the expression use the dictionary `name`? */
static int expr_uses(const oc_expr *e, const char *name)
{
    if (!e)
        return 0;
    if (e->kind == OC_LEAF)
        return e->dict && strcmp(e->dict->name, name) == 0;
    for (size_t i = 0; i < e->child_count; i++)
        if (expr_uses(e->children[i], name))
            return 1;
    return 0;
}

/* The regional models of s2t: Taiwan's for s2tw and s2twp, Hong Kong's for
 * s2hk and s2hkp (model_build_s2t_region). */
enum { REGION_TW, REGION_HK, REGION_COUNT };

static int region_of_profile(const char *name)
{
    if (strcmp(name, "s2tw") == 0 || strcmp(name, "s2twp") == 0)
        return REGION_TW;
    if (strcmp(name, "s2hk") == 0 || strcmp(name, "s2hkp") == 0)
        return REGION_HK;
    return -1;
}

/* The words of a regional model whose value differs from the general
 * model's (the same keys): the region's overrides (fj_context_rec). */
static oc_dict *region_overrides(const oc_dict *general, const oc_dict *region, const char *name,
                                 char *err, size_t errlen)
{
    size_t cap = 1 << 16, len = 0;
    char *text = malloc(cap);
    if (!text)
        return NULL;
    for (size_t i = 0; i < region->count; i++) {
        const oc_entry *e = &region->entries[i];
        const oc_entry *g = oc_dict_find(general, e->key, strlen(e->key));
        if (g && strcmp(g->values[0], e->values[0]) == 0)
            continue;
        size_t need = strlen(e->key) + strlen(e->values[0]) + 3;
        if (len + need >= cap) {
            char *bigger = realloc(text, cap = 2 * (len + need));
            if (!bigger) {
                free(text);
                return NULL;
            }
            text = bigger;
        }
        len += (size_t)snprintf(text + len, cap - len, "%s\t%s\n", e->key, e->values[0]);
    }
    oc_dict *d = oc_dict_parse_buffer(name, text, len, err, errlen);
    free(text);
    return d;
}

/* Builds the regional models whose data is given, each as its overrides of
 * the general model `general`; 0, or -1 and err. */
static int build_regions(const oc_data *data, const model_words *essay, const char *curated_dir,
                         const char *const region_paths[REGION_COUNT], int skip_misfits,
                         const oc_dict *general, model_tables regions[REGION_COUNT], char *err,
                         size_t errlen)
{
    static const char *const names[REGION_COUNT] = {"Taiwan", "Hong Kong"};
    static const char *const dict_names[REGION_COUNT] = {"context-s2t-taiwan",
                                                         "context-s2t-hongkong"};
    char cur[4096], forms[4096], surnames[4096];
    snprintf(cur, sizeof cur, "%s/s2t.tsv", curated_dir ? curated_dir : ".");
    snprintf(forms, sizeof forms, "%s/s2t-forms.tsv", curated_dir ? curated_dir : ".");
    snprintf(surnames, sizeof surnames, "%s/s2t-surnames.tsv", curated_dir ? curated_dir : ".");
    for (int r = 0; r < REGION_COUNT; r++) {
        if (!region_paths[r])
            continue;
        model_words *w = r == REGION_TW ? chewing_words_load(region_paths[r], err, errlen)
                                        : model_words_load(region_paths[r], err, errlen);
        model_region region = {names[r], w, stdout};
        int rc = w ? model_build_s2t_region(data, essay, &region, curated_dir ? cur : NULL,
                                            curated_dir ? forms : NULL,
                                            curated_dir ? surnames : NULL, skip_misfits,
                                            &regions[r], err, errlen)
                   : -1;
        model_words_free(w);
        if (rc != 0)
            return -1;
        oc_dict *over = region_overrides(general, regions[r].words, dict_names[r], err, errlen);
        if (!over)
            return -1;
        printf("fjdict: %s model: %zu keys in the region's form, %zu of them written "
               "otherwise than in s2t\n",
               names[r], regions[r].region_keys, over->count);
        oc_dict_free(regions[r].words);
        regions[r].words = over;
    }
    return 0;
}

/* The image's sources (FJ_SEC_SOURCES) from files of lines
 * "NAME<TAB>VERSION<TAB>LICENCE<TAB>ROLE", as the fetch scripts write them:
 * four NUL-terminated strings each. 0 on success; else a message in err. */
static int read_sources(const char *const *paths, size_t n, char **blob, size_t *len, char *err,
                        size_t errsize)
{
    *blob = NULL;
    *len = 0;
    for (size_t i = 0; i < n; i++) {
        FILE *f = fopen(paths[i], "r");
        if (!f) {
            snprintf(err, errsize, "%s: %s", paths[i], strerror(errno));
            return 1;
        }
        char line[1024];
        int lineno = 0;
        while (fgets(line, sizeof line, f)) {
            lineno++;
            size_t l = strlen(line);
            if (l && line[l - 1] == '\n')
                line[--l] = 0;
            if (l == 0 || line[0] == '#')
                continue;
            size_t tabs = 0;
            int empty = line[0] == '\t' || line[l - 1] == '\t';
            for (size_t k = 0; k < l; k++)
                if (line[k] == '\t') {
                    tabs++;
                    empty |= line[k + 1] == '\t';
                    line[k] = 0;
                }
            if (tabs != 3 || empty) {
                snprintf(err, errsize, "%s:%d: expected NAME, VERSION, LICENCE and ROLE, by tabs",
                         paths[i], lineno);
                fclose(f);
                return 1;
            }
            char *grown = realloc(*blob, *len + l + 1);
            if (!grown) {
                snprintf(err, errsize, "out of memory");
                fclose(f);
                return 1;
            }
            *blob = grown;
            memcpy(*blob + *len, line, l + 1);
            *len += l + 1;
        }
        fclose(f);
    }
    return 0;
}

static int compile(const char *dir, const char *out, const char *essay_path, const char *lm_path,
                   double lm_weight, const char *curated_dir, int skip_misfits,
                   const char *const region_paths[REGION_COUNT], const char *sources,
                   size_t sources_len)
{
    char err[1024] = "";
    oc_data *data = oc_data_load(dir, err, sizeof err);
    if (!data) {
        fprintf(stderr, "fjdict: %s\n", err);
        return 1;
    }
    if (data->profile_count > 16) { /* the tables below hold 16 */
        fprintf(stderr, "fjdict: %zu profiles in data/profiles.tsv, at most 16\n", data->profile_count);
        oc_data_free(data);
        return 1;
    }
    /* The context model's tables, when a word list is given. */
    model_tables s2t_model = {0}, t2s_model = {0}, regions[REGION_COUNT];
    memset(regions, 0, sizeof regions);
    repair_tables repair = {0};
    lm_table lm_tab = {0};
    int have_model = 0;
    if (essay_path) {
        model_words *essay = model_words_load(essay_path, err, sizeof err);
        char s2t_cur[4096], s2t_forms[4096], s2t_surnames[4096], t2s_cur[4096], repair_cur[4096];
        snprintf(s2t_surnames, sizeof s2t_surnames, "%s/s2t-surnames.tsv",
                 curated_dir ? curated_dir : ".");
        snprintf(s2t_cur, sizeof s2t_cur, "%s/s2t.tsv", curated_dir ? curated_dir : ".");
        snprintf(s2t_forms, sizeof s2t_forms, "%s/s2t-forms.tsv", curated_dir ? curated_dir : ".");
        snprintf(t2s_cur, sizeof t2s_cur, "%s/t2s.tsv", curated_dir ? curated_dir : ".");
        snprintf(repair_cur, sizeof repair_cur, "%s/repair.tsv", curated_dir ? curated_dir : ".");
        if (!essay ||
            model_build_s2t(data, essay, curated_dir ? s2t_cur : NULL,
                            curated_dir ? s2t_forms : NULL, curated_dir ? s2t_surnames : NULL,
                            skip_misfits, &s2t_model, err, sizeof err) != 0 ||
            model_build_t2s(data, essay, curated_dir ? t2s_cur : NULL,
                            curated_dir ? repair_cur : NULL, &t2s_model, err, sizeof err) != 0) {
            fprintf(stderr, "fjdict: %s\n", err);
            model_words_free(essay);
            return 1;
        }
        char repair_path[4096], either_path[4096];
        snprintf(repair_path, sizeof repair_path, "%s/repair.tsv", curated_dir ? curated_dir : ".");
        snprintf(either_path, sizeof either_path, "%s/repair-either.tsv",
                 curated_dir ? curated_dir : ".");
        /* Taiwan's native words tell which forms are never written. */
        model_words *native = NULL;
        if (curated_dir && region_paths[REGION_TW] &&
            !(native = chewing_words_load(region_paths[REGION_TW], err, sizeof err))) {
            fprintf(stderr, "fjdict: %s\n", err);
            model_words_free(essay);
            return 1;
        }
        int repair_rc = curated_dir ? model_build_repair(data, repair_path, either_path, essay,
                                                         s2t_model.words, native, &repair, err,
                                                         sizeof err)
                                    : 0;
        model_words_free(native);
        if (repair_rc != 0) {
            fprintf(stderr, "fjdict: %s\n", err);
            model_words_free(essay);
            return 1;
        }
        if (repair.derived_always)
            printf("fjdict: repair: %zu forms never right, from the data (TSCharacters against "
                   "STCharacters, the variant tables and Taiwan's words)\n",
                   repair.derived_always);
        if (build_regions(data, essay, curated_dir, region_paths, skip_misfits,
                          s2t_model.words, regions, err, sizeof err) != 0) {
            fprintf(stderr, "fjdict: %s\n", err);
            model_words_free(essay);
            return 1;
        }
        if (lm_path) {
            kenlm_model *lm = kenlm_open(lm_path, err, sizeof err);
            if (!lm || lm_build(lm, &s2t_model, lm_weight, &lm_tab, err, sizeof err) != 0) {
                fprintf(stderr, "fjdict: %s\n", err);
                kenlm_close(lm);
                model_words_free(essay);
                return 1;
            }
            printf("fjdict: language model: %zu s2t words known to it, %zu written as its "
                   "words (%zu as several); %zu bigram and %zu back-off costs in 2^%u slots "
                   "(%zu KiB)\n",
                   lm_tab.words_known, lm_tab.words_spelled, lm_tab.words_split, lm_tab.pairs,
                   lm_tab.backoffs,
                   lm_tab.bits, ((size_t)4 << lm_tab.bits) / 1024);
            kenlm_close(lm);
        }
        printf("fjdict: context model: %zu s2t words (%zu essay words used, %zu dropped), "
               "%zu t2s words\n",
               s2t_model.words->count, s2t_model.essay_used, s2t_model.essay_dropped,
               t2s_model.words->count);
        model_words_free(essay);
        have_model = 1;
    }
    oci_builder b;
    oci_builder_init(&b);

    fj_profile_rec profiles[16];
    fj_context_rec contexts[16];
    uint32_t s2t_ids[2] = {FJ_NONE, FJ_NONE}, t2s_ids[2] = {FJ_NONE, FJ_NONE};
    uint32_t region_ids[REGION_COUNT] = {FJ_NONE, FJ_NONE}; /* the regions' word matchers */
    uint32_t s2t_core = FJ_NONE, repair_fold_id = FJ_NONE; /* s2t's script step; the repair fold */
    uint32_t repair_attested_id = FJ_NONE;
    unsigned char *barriers = malloc(16 * (size_t)FJ_BARRIER_BYTES);
    memset(profiles, 0, sizeof profiles);
    for (size_t i = 0; i < data->profile_count; i++) {
        const oc_profile *p = data->profiles[i];
        fj_profile_rec *r = &profiles[i];
        unsigned char *barrier = barriers + i * FJ_BARRIER_BYTES;
        memset(barrier, 0xFF, FJ_BARRIER_BYTES);
        for (uint32_t cp = 0x2FF0; cp <= 0x2FFF; cp++)
            barrier[cp >> 3] &= (unsigned char)~(1u << (cp & 7));
        snprintf(r->name, sizeof r->name, "%s", p->name);
        fj_context_rec *cx = &contexts[i];
        cx->core_stage = cx->fold = cx->words = FJ_NONE;
        cx->flags = 0;
        cx->ambiguous = 0;
        cx->source_only = FJ_NONE;
        cx->suspects = cx->defaults = cx->attested = cx->overrides = FJ_NONE;
        cx->lm_bits = 0;
        if (p->normalization_count > 1) {
            fprintf(stderr, "fjdict: %s: more than one normalization step\n", p->name);
            return 1;
        }
        r->normalization = p->normalization_count
                               ? oci_matcher_for(&b, oc_expr_flatten(p->normalization[0], 0))
                               : FJ_NONE;
        oc_dict *seg = p->segmentation ? oc_expr_flatten(p->segmentation, 1) : NULL;
        uint32_t phrase_stages = 0; /* FJ_CONTEXT_PHRASE_SHIFT */
        /* OpenCC's library loads the tables marked may_output_tofu by default
         * (ConfigLoadOptions), and OpenCC 1.4.2's reference output uses them. */
        for (size_t c = 0; c < p->chain_count; c++) {
            uint32_t m = oci_matcher_for(&b, oc_expr_flatten(p->chain[c], 1));
            if (m == FJ_NONE)
                continue;
            if (r->stage_count == FJ_MAX_STAGES) {
                fprintf(stderr, "fjdict: %s: too many conversion steps\n", p->name);
                return 1;
            }
            if (have_model && cx->core_stage == FJ_NONE) {
                if (expr_uses(p->chain[c], "STCharacters")) {
                    if (s2t_ids[1] == FJ_NONE) {
                        b.plain = 1;
                        s2t_ids[0] = oci_matcher_for(&b, s2t_model.fold);
                        s2t_ids[1] = oci_matcher_for(&b, s2t_model.words);
                        b.plain = 0;
                        s2t_model.fold = s2t_model.words = NULL; /* owned by the oci_builder now */
                    }
                    cx->core_stage = r->stage_count;
                    s2t_core = m;
                    cx->fold = s2t_ids[0];
                    cx->words = s2t_ids[1];
                    cx->flags = FJ_CONTEXT_KEEP_FOLDED;
                    cx->ambiguous = 0;
                    cx->source_only = 0;
                    cx->lm_bits = lm_tab.bits;
                    /* A region's own model: its overrides of s2t's words,
                     * with its own AMBG and AMBP sets after s2t's and t2s's. */
                    int reg = region_of_profile(p->name);
                    if (reg >= 0 && (regions[reg].words || region_ids[reg] != FJ_NONE)) {
                        if (region_ids[reg] == FJ_NONE) {
                            b.plain = 1;
                            region_ids[reg] = oci_matcher_for(&b, regions[reg].words);
                            b.plain = 0;
                            regions[reg].words = NULL;
                        }
                        cx->overrides = region_ids[reg];
                        cx->ambiguous = 2 + (uint32_t)reg;
                    }
                } else if (expr_uses(p->chain[c], "TSCharacters")) {
                    if (t2s_ids[1] == FJ_NONE) {
                        b.plain = 1;
                        t2s_ids[1] = oci_matcher_for(&b, t2s_model.words);
                        b.plain = 0;
                        t2s_model.words = NULL;
                    }
                    cx->core_stage = r->stage_count;
                    cx->words = t2s_ids[1];
                    cx->ambiguous = 1;
                }
            }
            if (expr_uses(p->chain[c], "TWPhrases") || expr_uses(p->chain[c], "HKPhrases") ||
                expr_uses(p->chain[c], "TWPhrasesRev") || expr_uses(p->chain[c], "HKPhrasesRev"))
                phrase_stages |= 1u << r->stage_count;
            r->stages[r->stage_count++] = m;
        }
        if (cx->core_stage != FJ_NONE)
            cx->flags |= phrase_stages << FJ_CONTEXT_PHRASE_SHIFT;
        /* The profiles data/profiles.tsv marks as repairing (Traditional
         * input without a script step): the repair lattice runs before the
         * first step. */
        fj_profile_info meta = {.size = sizeof meta};
        int trad_input = fj_profile_info_get(NULL, p->name, &meta) == FJ_OK && meta.repairs;
        if (have_model && (repair.fold || repair_fold_id != FJ_NONE) && cx->core_stage == FJ_NONE && trad_input &&
            s2t_ids[1] != FJ_NONE && s2t_core != FJ_NONE) {
            if (repair_fold_id == FJ_NONE) {
                b.plain = 1;
                repair_fold_id = oci_matcher_for(&b, repair.fold);
                repair_attested_id = oci_matcher_for(&b, repair.attested);
                b.plain = 0;
                repair.fold = repair.attested = NULL;
            }
            cx->core_stage = 0;
            cx->flags = FJ_CONTEXT_REPAIR;
            cx->fold = repair_fold_id;
            cx->words = s2t_ids[1];
            cx->ambiguous = 0;
            cx->suspects = 1;
            cx->defaults = s2t_core;
            cx->attested = repair_attested_id;
            cx->source_only = 0; /* a run with Simplified-only characters is not repaired */
            cx->lm_bits = lm_tab.bits; /* the same words, the same model */
        }
        if (seg && r->stage_count && oci_seg_is_step1(seg, b.matcher_dicts[r->stages[0]])) {
            oc_dict_free(seg);
            r->segmentation = r->stages[0];
            r->flags |= FJ_PROFILE_SEG_IS_STEP1;
        } else {
            r->segmentation = oci_matcher_for(&b, seg);
        }
        uint32_t used[2 + FJ_MAX_STAGES] = {r->normalization, r->segmentation};
        for (uint32_t s = 0; s < r->stage_count; s++)
            used[2 + s] = r->stages[s];
        for (uint32_t s = 0; s < 2 + r->stage_count; s++)
            if (used[s] != FJ_NONE)
                oci_clear_key_chars(barrier, b.matcher_dicts[used[s]]);
        /* No lattice word may cross a barrier either. */
        if (cx->fold != FJ_NONE)
            oci_clear_key_chars(barrier, b.matcher_dicts[cx->fold]);
        if (cx->words != FJ_NONE)
            oci_clear_key_chars(barrier, b.matcher_dicts[cx->words]);
        r->barrier = (uint32_t)i;
    }

    if (b.error[0]) {
        fprintf(stderr, "fjdict: %s\n", b.error);
        exit(65);
    }
    if (b.node_count >= FJ_MAX_NODES) {
        fprintf(stderr, "fjdict: too many trie nodes\n");
        return 1;
    }
    size_t hslots;
    uint64_t *edge_hash = oci_edge_hash(&b, &hslots);

    /* The source dictionaries, for --decompile. */
    fj_srcdict_rec *sd = calloc(data->source_count, sizeof *sd);
    fj_srcentry_rec *se = NULL;
    size_t se_count = 0, se_cap = 0;
    for (size_t i = 0; i < data->source_count; i++) {
        const oc_dict *d = data->dicts[i];
        sd[i].name_off = (uint32_t)oci_buf_add(&b.strings.bytes, d->name, strlen(d->name));
        sd[i].name_len = (uint32_t)strlen(d->name);
        sd[i].first_entry = (uint32_t)se_count;
        sd[i].entry_count = (uint32_t)d->count;
        for (size_t e = 0; e < d->count; e++) {
            se = oci_grow(se, &se_cap, se_count + 1, sizeof *se);
            const oc_entry *en = &d->entries[e];
            se[se_count].key_off = oci_pool_add(&b.strings, en->key, strlen(en->key));
            se[se_count].key_len = (uint32_t)strlen(en->key);
            size_t vl = 0;
            for (size_t v = 0; v < en->value_count; v++)
                vl += strlen(en->values[v]) + 1;
            char *joined = malloc(vl + 1), *w = joined;
            for (size_t v = 0; v < en->value_count; v++) {
                if (v)
                    *w++ = ' ';
                size_t n = strlen(en->values[v]);
                memcpy(w, en->values[v], n);
                w += n;
            }
            se[se_count].values_off = oci_pool_add(&b.strings, joined, (size_t)(w - joined));
            se[se_count].values_len = (uint32_t)(w - joined);
            free(joined);
            se_count++;
        }
    }

    /* AMBG and AMBP: s2t's, t2s's, then Taiwan's and Hong Kong's (empty
     * when the region's model is not built: no profile names them then). */
    unsigned char *ambig = calloc(2 + REGION_COUNT, FJ_BARRIER_BYTES);
    /* SONL: s2t's Simplified-only characters, then repair's two sets. */
    unsigned char *srconly = calloc(3, FJ_BARRIER_BYTES);
    if (have_model) {
        memcpy(srconly, s2t_model.source_only, FJ_BARRIER_BYTES);
        if (repair.always) {
            memcpy(srconly + FJ_BARRIER_BYTES, repair.always, FJ_BARRIER_BYTES);
            memcpy(srconly + 2 * FJ_BARRIER_BYTES, repair.in_words, FJ_BARRIER_BYTES);
        }
    }
    unsigned char *ambpairs = calloc(2 + REGION_COUNT, FJ_BIGRAM_BITS / 8);
    if (have_model) {
        memcpy(ambpairs, s2t_model.pairs, FJ_BIGRAM_BITS / 8);
        memcpy(ambpairs + FJ_BIGRAM_BITS / 8, t2s_model.pairs, FJ_BIGRAM_BITS / 8);
        memcpy(ambig, s2t_model.ambiguous, FJ_BARRIER_BYTES);
        memcpy(ambig + FJ_BARRIER_BYTES, t2s_model.ambiguous, FJ_BARRIER_BYTES);
        for (int reg = 0; reg < REGION_COUNT; reg++) {
            if (!regions[reg].ambiguous)
                continue;
            memcpy(ambig + (2 + (size_t)reg) * FJ_BARRIER_BYTES, regions[reg].ambiguous,
                   FJ_BARRIER_BYTES);
            memcpy(ambpairs + (2 + (size_t)reg) * (FJ_BIGRAM_BITS / 8), regions[reg].pairs,
                   FJ_BIGRAM_BITS / 8);
        }
        size_t na[2] = {0, 0};
        for (size_t k = 0; k < 2 * (size_t)FJ_BARRIER_BYTES; k++)
            na[k / FJ_BARRIER_BYTES] += (size_t)__builtin_popcount(ambig[k]);
        printf("fjdict: context model: %zu s2t and %zu t2s characters depend on context\n",
               na[0], na[1]);
    }
    oci_section secs[] = {
        {FJ_SEC_STRINGS, b.strings.bytes.p, b.strings.bytes.len},
        {FJ_SEC_NODES, b.nodes, b.node_count * sizeof(fj_node_rec)},
        {FJ_SEC_EDGES, b.edges, b.node_count * sizeof(uint32_t)},
        {FJ_SEC_BLOCKS, b.blocks, b.block_count * FJ_BLOCK_SIZE * sizeof(uint32_t)},
        {FJ_SEC_LEVEL1, b.level1, b.level1_count * FJ_L1_SIZE * sizeof(uint32_t)},
        {FJ_SEC_MATCHERS, b.matchers, b.matcher_count * sizeof(fj_matcher_rec)},
        {FJ_SEC_PROFILES, profiles, data->profile_count * sizeof(fj_profile_rec)},
        {FJ_SEC_BARRIERS, barriers, data->profile_count * (size_t)FJ_BARRIER_BYTES},
        {FJ_SEC_SRCDICTS, sd, data->source_count * sizeof *sd},
        {FJ_SEC_SRCENTRY, se, se_count * sizeof *se},
        {FJ_SEC_BIGRAMS, b.bigrams, FJ_BIGRAM_BITS / 8},
        {FJ_SEC_PAIRKEYS, b.pairkeys, FJ_BIGRAM_BITS / 8},
        {FJ_SEC_TRIGRAMS, b.trigrams, FJ_BIGRAM_BITS / 8},
        {FJ_SEC_EDGEHASH, edge_hash, hslots * sizeof(uint64_t)},
        {FJ_SEC_CHANGERS, b.changers, FJ_CHANGERS_BYTES},
        {FJ_SEC_INNER, b.inner, FJ_BIGRAM_BITS / 8},
        {FJ_SEC_CHKEYS, b.chkeys, FJ_BIGRAM_BITS / 8},
        {FJ_SEC_CONTEXT, contexts, data->profile_count * sizeof(fj_context_rec)},
        {FJ_SEC_AMBIG, ambig, have_model ? (2 + REGION_COUNT) * (size_t)FJ_BARRIER_BYTES : 0},
        {FJ_SEC_AMBPAIRS, ambpairs,
         have_model ? (2 + REGION_COUNT) * (size_t)FJ_BIGRAM_BITS / 8 : 0},
        {FJ_SEC_SRCONLY, srconly, have_model ? 3 * (size_t)FJ_BARRIER_BYTES : 0},
        {FJ_SEC_DAMAGEW, repair.damage_weights, repair.damage_weights ? 0x80000 : 0},
        {FJ_SEC_LANGMOD, lm_tab.slots, lm_tab.bits ? (size_t)4 << lm_tab.bits : 0},
        {FJ_SEC_SOURCES, sources, sources_len},
        {FJ_SEC_RECORDS, NULL, 0}, /* last: step_records fills it in */
    };
    uint32_t nsec = (uint32_t)(sizeof secs / sizeof secs[0]);
    printf("fjdict: %zu source dictionaries, %zu profiles, %zu matchers, %zu nodes, %zu blocks\n",
           data->source_count, data->profile_count, b.matcher_count, b.node_count,
           b.block_count);
    uint64_t *records = step_records(&b, secs, nsec, profiles, data->profile_count);
    int rc = !records || write_image(out, secs, nsec) ? 1 : 0;
    free(records);

    oci_builder_free(&b);
    free(edge_hash);
    free(barriers);
    free(sd);
    free(se);
    free(ambig);
    free(srconly);
    repair_tables_free(&repair);
    lm_table_free(&lm_tab);
    free(ambpairs);
    model_tables_free(&s2t_model);
    model_tables_free(&t2s_model);
    for (int reg = 0; reg < REGION_COUNT; reg++)
        model_tables_free(&regions[reg]);
    oc_data_free(data);
    return rc;
}

static int decompile(const char *image, const char *outdir)
{
    fj_dict *dict = NULL;
    fj_error err;
    if (fj_dict_open(image, NULL, &dict, &err) != FJ_OK) {
        fprintf(stderr, "fjdict: %s: %s\n", image, err.message);
        return 1;
    }
    if (mkdir(outdir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "fjdict: %s: %s\n", outdir, strerror(errno));
        fj_dict_close(dict);
        return 1;
    }
    if (fj__dict_use_sources(dict, &err) != FJ_OK) {
        fprintf(stderr, "fjdict: %s: %s\n", image, err.message);
        fj_dict_close(dict);
        return 1;
    }
    const fj_image *img = fj__dict_image(dict);
    int rc = 0;
    for (uint32_t i = 0; i < img->srcdict_count && rc == 0; i++) {
        const fj_srcdict_rec *d = &img->srcdicts[i];
        char path[4096];
        snprintf(path, sizeof path, "%s/%.*s.txt", outdir, (int)d->name_len,
                 img->strings + d->name_off);
        replacing_file out;
        if (replacing_open(&out, path) != 0) {
            rc = 1;
            break;
        }
        for (uint32_t e = 0; e < d->entry_count; e++) {
            const fj_srcentry_rec *en = &img->srcentries[d->first_entry + e];
            fwrite(img->strings + en->key_off, 1, en->key_len, out.f);
            fputc('\t', out.f);
            fwrite(img->strings + en->values_off, 1, en->values_len, out.f);
            fputc('\n', out.f);
        }
        if (replacing_commit(&out, path) != 0)
            rc = 1;
    }
    if (rc == 0)
        printf("fjdict: wrote %u dictionaries to %s\n", img->srcdict_count, outdir);
    fj_dict_close(dict);
    return rc;
}

/* --lm-dump: the model as tools' text, to check the reader against
 * ../shared/tools/kenlm-dump.py. bigrams and trigrams take optional WORDs:
 * only n-grams whose first word is one of them. */
static int lm_dump(const char *path, const char *what, char **want, int nwant)
{
    char err[300];
    kenlm_model *m = kenlm_open(path, err, sizeof err);
    if (!m) {
        fprintf(stderr, "fjdict: %s\n", err);
        return 1;
    }
    int uni = strcmp(what, "unigrams") == 0, bi = strcmp(what, "bigrams") == 0,
        tri = strcmp(what, "trigrams") == 0;
    uint32_t vocab = (uint32_t)kenlm_count(m, 1);
    unsigned char *wanted = NULL;
    if (nwant > 0) {
        wanted = calloc(vocab, 1);
        for (int i = 0; wanted && i < nwant; i++) {
            uint32_t id = kenlm_find(m, want[i], strlen(want[i]));
            if (id || strcmp(want[i], "<unk>") == 0)
                wanted[id] = 1;
        }
    }
    for (uint32_t w = 0; w < vocab && (uni || bi || tri); w++) {
        size_t wl, xl, yl;
        const char *ws = kenlm_word(m, w, &wl);
        float p, b;
        if (uni) {
            kenlm_unigram(m, w, &p, &b);
            printf("%.*s\t%.4f\t%.4f\n", (int)wl, ws, (double)p, (double)b);
            continue;
        }
        uint64_t begin, end;
        kenlm_bigrams_ending(m, w, &begin, &end);
        for (uint64_t i = begin; i < end; i++) {
            uint32_t x;
            kenlm_bigram(m, i, &x, &p, &b);
            const char *xs = kenlm_word(m, x, &xl);
            if (!xs)
                continue;
            if (bi) {
                if (!wanted || wanted[x])
                    printf("%.*s\t%.*s\t%.3f\n", (int)xl, xs, (int)wl, ws, (double)p);
                continue;
            }
            uint64_t tb, te;
            kenlm_trigrams_under(m, i, &tb, &te);
            for (uint64_t t = tb; t < te; t++) {
                uint32_t y;
                kenlm_trigram(m, t, &y, &p);
                const char *ys = kenlm_word(m, y, &yl);
                if (ys && (!wanted || wanted[y]))
                    printf("%.*s\t%.*s\t%.*s\t%.3f\n", (int)yl, ys, (int)xl, xs, (int)wl, ws,
                           (double)p);
            }
        }
    }
    free(wanted);
    kenlm_close(m);
    if (!(uni || bi || tri)) {
        fprintf(stderr, "fjdict: --lm-dump: unigrams, bigrams or trigrams\n");
        return 2;
    }
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}

/* What --lint builds its images with: --compile with a curated directory. */
static int lint_build_image(const char *data_dir, const char *image_path, const char *essay_path,
                            const char *curated_dir)
{
    /* The same model as the default image: no language model (LM_WEIGHT 0). */
    static const char *const no_regions[REGION_COUNT] = {NULL, NULL};
    return compile(data_dir, image_path, essay_path, NULL, 0, curated_dir, 0, no_regions, NULL, 0);
}

/* libchewing's phrases with their frequencies, one a line. */
static int list_chewing(const char *dir)
{
    char err[1024] = "";
    model_words *w = chewing_words_load(dir, err, sizeof err);
    if (!w) {
        fprintf(stderr, "fjdict: %s\n", err);
        return 1;
    }
    for (size_t i = 0; i < w->count; i++)
        printf("%s\t%.0f\n", w->words[i], w->counts[i]);
    model_words_free(w);
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: fjdict --compile OPENCC_DATA_DIR -o IMAGE [--essay FILE [--lm MODEL.lm]\n"
               "                                   [--curated DIR [--skip-misfits]]\n"
               "                                   [--taiwan CHEWING_DIR] [--hongkong FILE]]\n"
               "                                   [--source FILE ...]\n"
               "       fjdict --decompile IMAGE OUTDIR\n"
               "       fjdict --lm-dump MODEL.lm unigrams|bigrams|trigrams [WORD...]\n"
               "       fjdict --chewing CHEWING_DIR\n"
               "       fjdict --lint DIR [--data OPENCC_DATA_DIR --essay FILE]\n"
               "OPENCC_DATA_DIR holds OpenCC's dictionary/ and config/ directories.\n"
               "--essay: a word list with counts (rime-essay's essay.txt) for the context\n"
               "model of the default mode; --curated: a directory with our own s2t.tsv,\n"
               "s2t-forms.tsv, s2t-surnames.tsv, t2s.tsv, repair.tsv and\n"
               "repair-either.tsv. Without --essay the image offers the compatible mode\n"
               "only. --lm: a KenLM word model of Simplified Chinese (libime's zh_CN.lm)\n"
               "scored beside the word list, with --lm-weight W (default %.2f) against it.\n"
               "--skip-misfits: leave out curated entries that OpenCC's tables (cut\n"
               "down, for tests) do not allow, instead of failing. --taiwan: libchewing\n"
               "0.5's dictionary.dat and index_tree.dat, whose counts choose the forms of\n"
               "s2tw's and s2twp's model; --hongkong: a word list with counts\n"
               "(essay-cantonese.txt) choosing those of s2hk and s2hkp. --chewing: lists\n"
               "libchewing's phrases as PHRASE<TAB>FREQUENCY.\n"
               "--source: a file of lines NAME<TAB>VERSION<TAB>LICENCE<TAB>ROLE, one per\n"
               "third-party source, which the image names (fj_dict_info).\n"
               "--lint: refuses conflicting entries in the curated tables of DIR (exit\n"
               "status 1) and counts them; with --data and --essay, also warns of\n"
               "s2t.tsv and t2s.tsv entries that change nothing.\n",
            FJ_LM_WEIGHT);
}

int main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "--compile") == 0 && strcmp(argv[3], "-o") == 0) {
        const char *essay = NULL, *curated = NULL, *lm = NULL;
        const char *region_paths[REGION_COUNT] = {NULL, NULL};
        double lm_weight = FJ_LM_WEIGHT;
        const char *source_paths[16];
        size_t source_count = 0;
        int i = 5, skip_misfits = 0;
        for (; i < argc; i++) {
            if (strcmp(argv[i], "--essay") == 0 && i + 1 < argc)
                essay = argv[++i];
            else if (strcmp(argv[i], "--curated") == 0 && i + 1 < argc)
                curated = argv[++i];
            else if (strcmp(argv[i], "--lm") == 0 && i + 1 < argc)
                lm = argv[++i];
            else if (strcmp(argv[i], "--lm-weight") == 0 && i + 1 < argc)
                lm_weight = strtod(argv[++i], NULL);
            else if (strcmp(argv[i], "--taiwan") == 0 && i + 1 < argc)
                region_paths[REGION_TW] = argv[++i];
            else if (strcmp(argv[i], "--hongkong") == 0 && i + 1 < argc)
                region_paths[REGION_HK] = argv[++i];
            else if (strcmp(argv[i], "--skip-misfits") == 0)
                skip_misfits = 1;
            else if (strcmp(argv[i], "--source") == 0 && i + 1 < argc && source_count < 16)
                source_paths[source_count++] = argv[++i];
            else
                break;
        }
        if (i == argc && (!curated || essay) && (!lm || essay) &&
            (essay || (!region_paths[REGION_TW] && !region_paths[REGION_HK]))) {
            char *sources, err[1100];
            size_t sources_len;
            if (read_sources(source_paths, source_count, &sources, &sources_len, err,
                             sizeof err) != 0) {
                fprintf(stderr, "fjdict: %s\n", err);
                return 1;
            }
            int rc = compile(argv[2], argv[4], essay, lm, lm_weight, curated, skip_misfits,
                             region_paths, sources, sources_len);
            free(sources);
            return rc;
        }
    }
    if (argc == 3 && strcmp(argv[1], "--chewing") == 0)
        return list_chewing(argv[2]);
    if (argc >= 4 && strcmp(argv[1], "--lm-dump") == 0)
        return lm_dump(argv[2], argv[3], argv + 4, argc - 4);
    if (argc >= 3 && strcmp(argv[1], "--lint") == 0)
        return lint_main(argc - 2, argv + 2, lint_build_image);
    if (argc == 4 && strcmp(argv[1], "--decompile") == 0)
        return decompile(argv[2], argv[3]);
    if (argc == 2 && strcmp(argv[1], "--help") == 0) {
        usage(stdout);
        return 0;
    }
    usage(stderr);
    return 2;
}
