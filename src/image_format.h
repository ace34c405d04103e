/* On-disk layout of the fanjian dictionary image (shared by fjdict and the
 * library). Everything is little-endian and 4- or 8-byte aligned so the
 * library can use the mapped file in place. */
#ifndef FJ_IMAGE_FORMAT_H
#define FJ_IMAGE_FORMAT_H

#include <stdint.h>

#define FJ_IMAGE_MAGIC "FJDICT\x1a\n"
#define FJ_IMAGE_VERSION 8u
#define FJ_IMAGE_HEADER_SIZE 64u

/* Section tags: four ASCII bytes read as a little-endian u32. */
#define FJ_TAG(a, b, c, d) \
    ((uint32_t)(a) | ((uint32_t)(b) << 8) | ((uint32_t)(c) << 16) | ((uint32_t)(d) << 24))
#define FJ_SEC_STRINGS  FJ_TAG('S', 'T', 'R', 'S') /* UTF-8 blob */
#define FJ_SEC_NODES    FJ_TAG('N', 'O', 'D', 'E') /* fj_node_rec[] */
#define FJ_SEC_EDGES    FJ_TAG('E', 'D', 'G', 'E') /* u32 code point of the edge into node i */
#define FJ_SEC_BLOCKS   FJ_TAG('B', 'L', 'K', 'S') /* u32[256] per block: node id + 1, 0 none */
#define FJ_SEC_LEVEL1   FJ_TAG('L', 'V', 'L', '1') /* u32[FJ_L1_SIZE] per matcher: block ids */
#define FJ_SEC_MATCHERS FJ_TAG('M', 'T', 'C', 'H') /* fj_matcher_rec[] */
#define FJ_SEC_PROFILES FJ_TAG('P', 'R', 'O', 'F') /* fj_profile_rec[] */
#define FJ_SEC_BARRIERS FJ_TAG('B', 'A', 'R', 'R') /* FJ_BARRIER_BYTES per profile */
#define FJ_SEC_SRCDICTS FJ_TAG('S', 'R', 'C', 'D') /* fj_srcdict_rec[] */
#define FJ_SEC_SRCENTRY FJ_TAG('S', 'R', 'C', 'E') /* fj_srcentry_rec[] */
#define FJ_SEC_BIGRAMS  FJ_TAG('B', 'I', 'G', 'R') /* FJ_BIGRAM_BITS bit set, see fj_bigram_hash */
#define FJ_SEC_PAIRKEYS FJ_TAG('P', 'A', 'I', 'R') /* same shape: the two characters are a key */
#define FJ_SEC_TRIGRAMS FJ_TAG('T', 'R', 'I', 'G') /* same shape: a key starts with these three */
#define FJ_SEC_EDGEHASH FJ_TAG('E', 'D', 'G', 'H') /* u64 slots: second-character edges, see below */
#define FJ_SEC_CHANGERS FJ_TAG('C', 'H', 'N', 'G') /* FJ_BIGRAM_BITS bits, fj_change_hash: a key starts
                                                    * with these two characters and changes the output;
                                                    * then FJ_CHANGE_NEVER, a line of zeros, and
                                                    * FJ_CHANGE_ALWAYS, a line of ones */
#define FJ_SEC_INNER    FJ_TAG('I', 'N', 'N', 'R') /* same shape: the two are adjacent inside a key */
#define FJ_SEC_CHKEYS   FJ_TAG('C', 'H', 'K', 'Y') /* same shape as BIGR: a two-character key that
                                                    * changes the output, or (salt FJ_CHKEYS_LONGER)
                                                    * the first three of a longer one */
#define FJ_SEC_CONTEXT  FJ_TAG('C', 'T', 'X', 'T') /* fj_context_rec[], one per profile */
#define FJ_SEC_AMBIG    FJ_TAG('A', 'M', 'B', 'G') /* FJ_BARRIER_BYTES bit sets, see fj_context_rec */
#define FJ_SEC_AMBPAIRS FJ_TAG('A', 'M', 'B', 'P') /* FJ_BIGRAM_BITS bit sets, see fj_context_rec */
#define FJ_SEC_LANGMOD  FJ_TAG('L', 'M', 'T', 'B') /* u32 slots: the language model's context
                                                    * costs, see fj_lm_key */
#define FJ_SEC_SRCONLY  FJ_TAG('S', 'O', 'N', 'L') /* FJ_BARRIER_BYTES bit sets, see fj_context_rec */
#define FJ_SEC_SOURCES  FJ_TAG('S', 'R', 'C', 'S') /* optional: per third-party source, four
                                                    * NUL-terminated UTF-8 strings: name,
                                                    * version, licence, role */
#define FJ_SEC_RECORDS  FJ_TAG('R', 'E', 'C', 'S') /* u64[FJ_REC_COUNT] per table: the fast loop's
                                                    * per-character records of a matcher that is a
                                                    * conversion step (fj_matcher_rec.records),
                                                    * which fjdict derives from its trie */
#define FJ_SEC_DAMAGEW  FJ_TAG('D', 'M', 'G', 'W') /* 0x10000 int16 quadruples or none: per BMP
                                                    * reading with several Traditional forms,
                                                    * what seeing its first form and one of its
                                                    * others adds to repair's damage estimate,
                                                    * in thousandths of a nat, then the share of
                                                    * its other forms in correct text, in
                                                    * ten-thousandths, and 0 (all 0: unknown) */

#define FJ_L1_SIZE (0x110000u >> 8)
#define FJ_BLOCK_SIZE 256u
#define FJ_BARRIER_BYTES (0x10000u / 8u) /* BMP only; astral is never a barrier */
#define FJ_NONE 0xFFFFFFFFu
/* Code point table entries (u32): 0, a node id (node 0 is a placeholder that
 * no entry names, so 0 can mean "no key starts here"), or one of these. */
#define FJ_ENTRY_IDS 0xFFFFFFFFu    /* an IDS operator that starts no key */
/* | the three UTF-8 bytes (first byte lowest) of a three-byte character:
 * the character's whole answer */
#define FJ_ENTRY_DIRECT 0x80000000u
#define FJ_ENTRY_HAS_VALUE 0x40000000u    /* with a node: a key ends at the first character */
#define FJ_ENTRY_HAS_CHILDREN 0x20000000u /* with a node: longer keys start here */
/* With a node: a longer key that starts here changes the output, i.e. its
 * value is not its characters' own answers (their one-character keys, or
 * themselves) one after another. Where no such key starts, converting one
 * character at a time gives the same output as maximum matching, so the
 * hot path needs the trie only where CHNG says one may start. */
#define FJ_ENTRY_CHANGES 0x10000000u
/* CHKY's salt for three-character prefixes: matcher salt | this. */
#define FJ_CHKEYS_LONGER 0x400u
/* CHNG's lines (64 bytes): 4096 hashed ones, then two that answer alike for
 * every second character, for first characters that start no changing key
 * and for those the hot path must never take one at a time. */
#define FJ_CHANGE_NEVER 4096u
#define FJ_CHANGE_ALWAYS 4097u
#define FJ_CHANGERS_BYTES (FJ_BIGRAM_BITS / 8 + 2 * 64)
#define FJ_ENTRY_NODE_MASK 0x0FFFFFFFu
/* A record (RECS, fj_matcher.rec), per three-byte code point in
 * [FJ_REC_FIRST, 0x10000): the character's own UTF-8 answer (3 bytes, first
 * lowest) and flags in the low half; in the high half, where CHNG holds its
 * pairs (FJ_REC_LINE, as a first character, at most FJ_CHANGE_ALWAYS;
 * FJ_REC_POS1 and FJ_REC_POS2, as a second). */
#define FJ_REC_FIRST 0x2000u
#define FJ_REC_COUNT (0x10000u - FJ_REC_FIRST)
#define FJ_REC_PHRASE_BIT 24  /* a longer key starts with this character */
#define FJ_REC_SPECIAL_BIT 25 /* the answer is not three bytes, or an IDS: slow path */
#define FJ_REC_CHANGES_BIT 26 /* a longer key that changes the output starts here */
#define FJ_REC_LINE(r) ((uint32_t)((r) >> 32) & 0x1FFFu)  /* CHNG line, as first (FJ_CHANGE_*) */
#define FJ_REC_POS1(r) ((uint32_t)((r) >> 45) & 511u)     /* bit in it, as second */
#define FJ_REC_POS2(r) ((uint32_t)((r) >> 54) & 511u)     /* the other bit */
#define FJ_BIGRAM_BITS (1u << 21)
#define FJ_NO_VALUE 0xFFFFu
#define FJ_MAX_STAGES 4u
#define FJ_PROFILE_NAME_MAX 16u

/* Layout: the header, the section table, the chunk sums, then the sections
 * (the body). The body is checked in chunks of FJ_CHUNK_SIZE bytes, each
 * against its own sum, so that opening reads only what a converter uses:
 * the library checks a chunk when something first needs it. */
typedef struct fj_header_rec {
    char magic[8];
    uint32_t version;
    uint32_t section_count;
    uint64_t file_size;
    uint64_t checksum;    /* fj_checksum of the section table and the chunk sums */
    uint32_t chunk_count; /* ceil(body size / FJ_CHUNK_SIZE) */
    uint32_t reserved[7];
} fj_header_rec;
#define FJ_CHUNK_SIZE 16384u

typedef struct fj_section_rec {
    uint32_t tag;
    uint32_t reserved;
    uint64_t offset;
    uint64_t size;
} fj_section_rec;

/* A trie node. The node reached by a key's last character carries its value. */
typedef struct fj_node_rec {
    uint32_t value;       /* value_len <= 4: the bytes themselves; else an offset into STRS */
    uint32_t first_child; /* children are nodes [first_child, first_child + child_count) */
    uint16_t value_len;   /* FJ_NO_VALUE: no key ends here */
    uint16_t child_count; /* sorted by EDGES[child] */
} fj_node_rec;
#define FJ_INLINE_VALUE_MAX 4u

/* A matcher's trie is the nodes [node_first, node_end) and its code point
 * table's blocks are [block_first, block_end) (and the empty block 0): a
 * matcher is checked on its own, when a converter first uses it. */
typedef struct fj_matcher_rec {
    uint32_t level1;        /* index of this matcher's table in LVL1, in units of FJ_L1_SIZE */
    uint32_t max_key_chars; /* longest key in characters */
    uint32_t flags;
    uint32_t records; /* its table in RECS, in units of FJ_REC_COUNT records, or FJ_NONE */
    uint32_t node_first, node_end;
    uint32_t block_first, block_end;
    uint32_t edge_first, edge_slots; /* its table in EDGH: a power of two slots */
} fj_matcher_rec;

typedef struct fj_profile_rec {
    char name[FJ_PROFILE_NAME_MAX];     /* NUL-padded, e.g. "s2twp" */
    uint32_t normalization;             /* matcher id or FJ_NONE */
    uint32_t segmentation;              /* matcher id or FJ_NONE */
    uint32_t stage_count;               /* 1..FJ_MAX_STAGES */
    uint32_t stages[FJ_MAX_STAGES];
    uint32_t barrier;                   /* index into BARR */
    uint32_t flags;                     /* FJ_PROFILE_* */
    uint32_t reserved;
} fj_profile_rec;

/* The segmentation dictionary is exactly the first step's keys of two or more
 * characters: segmentation then uses the first step's matcher, ignoring
 * one-character matches, and a phrase segment's first-step result is the
 * match's value. (True of OpenCC's s2tw, s2twp, s2hk and s2hkp.) */
#define FJ_PROFILE_SEG_IS_STEP1 1u

/* The context model of a profile (default mode). The conversion step
 * core_stage is replaced by a lattice over the matcher `words`, whose values
 * are a cost character (U+E000 + cost) followed by the target form; with no
 * target, each character takes its own one-character answer. With
 * `fold`, input characters are first mapped to their reading through that
 * matcher. core_stage == FJ_NONE: the profile has no context model. */
typedef struct fj_context_rec {
    uint32_t core_stage;
    uint32_t fold;  /* matcher id or FJ_NONE */
    uint32_t words; /* matcher id */
    uint32_t flags; /* FJ_CONTEXT_* */
    /* Index into AMBG: the BMP characters whose form may depend on context,
     * and into AMBP: the adjacent reading pairs (fj_bigram_hash, salt 0)
     * inside words that give such a character another form. A character
     * needs the lattice only when it is in AMBG and a neighbour pair is in
     * AMBP. */
    uint32_t ambiguous;
    /* Index into AMBG, or FJ_NONE: the characters that exist only in the
     * source script (发, 这). A run with a character already in the target
     * script (a folded one) and none of these is taken as written in the
     * target script: its characters keep their form. */
    uint32_t source_only;
    /* With FJ_CONTEXT_REPAIR: index into SONL of the characters to choose
     * again always (suspects) and, at suspects + 1, only where a word of two
     * or more characters covers them; `defaults` is the matcher whose
     * one-character answers are a reading's default form. */
    uint32_t suspects, defaults;
    /* With FJ_CONTEXT_REPAIR: a matcher whose keys are words as written that
     * repair keeps (a form the model would not choose), or FJ_NONE. */
    uint32_t attested;
    /* Without FJ_CONTEXT_REPAIR: a matcher of the words of `words` whose
     * form this profile's region writes otherwise (Taiwan's 計畫 for 计划),
     * with their values there (same cost, the region's target), or
     * FJ_NONE. Its keys are keys of `words`: a word found there takes the
     * value found here, and a one-character word its form. */
    uint32_t overrides;
    /* The language model: log2 of the LMTB slots it uses (all of them), or
     * 0 for none. Its words' own costs are in `words` already; LMTB holds
     * what depends on the word before. */
    uint32_t lm_bits;
} fj_context_rec;

/* A character whose reading differs from itself is already in the target
 * script: it is kept as written. */
#define FJ_CONTEXT_KEEP_FOLDED 1u
/* Repair (Traditional input): the lattice runs before step core_stage
 * instead of replacing it, and only the suspects may change. */
#define FJ_CONTEXT_REPAIR 2u
/* Bit FJ_CONTEXT_PHRASE_SHIFT + k: step k holds regional phrases (TWPhrases,
 * HKPhrases and their reverses). In the default mode its keys of two or more
 * characters do not match where the lattice's segmentation puts both of their
 * ends inside words (src/context.c, phrase_fits). */
#define FJ_CONTEXT_PHRASE_SHIFT 8u
#define FJ_CONTEXT_COST_BASE 0xE000u
#define FJ_CONTEXT_COST_MAX 4095u

/* The language model's table (LMTB): a word is the sequence of its
 * characters' readings, hashed by fj_lm_word_hash. Each slot is 0 (empty)
 * or a 20-bit fingerprint (never 0) above a 12-bit cost biased by
 * FJ_LM_BIAS. Key (previous word, word): the cost of the word after that
 * word, beyond its own cost. Key (word, FJ_LM_BACKOFF): what any other word
 * after it costs extra. Linear probing from the key's top bits. */
#define FJ_LM_BIAS 2048
#define FJ_LM_BACKOFF 0x9F4A7C15u
#define FJ_LM_SENTENCE_START 0x1B873593u /* the hash of the start of a run */
#define FJ_LM_SENTENCE_END 0x85EBCA6Bu   /* the hash of the end of a run */
#define FJ_LM_BITS_MAX 24u
/* A lattice word the model does not know, but writes as several words it
 * does, carries after its cost character U+F000 + (head << 3 | tail): its
 * first and last characters that are the model's first and last words.
 * The word before is scored against the head, the word after against the
 * tail, as if the model's own words stood there. */
#define FJ_LM_SPLIT_BASE 0xF000u
#define FJ_LM_SPLIT_MAX 7u
static inline uint32_t fj_lm_word_step(uint32_t h, uint32_t cp)
{
    return (h ^ cp) * 0x01000193u;
}
#define FJ_LM_WORD_SEED 0x811C9DC5u
static inline uint64_t fj_lm_key(uint32_t before, uint32_t word)
{
    uint64_t k = ((uint64_t)before << 32 | word) * 0x9E3779B97F4A7C15ull;
    return k ^ k >> 29;
}
static inline uint32_t fj_lm_fingerprint(uint64_t key)
{
    return (uint32_t)(key & 0xFFFFFu) | 1u;
}

/* The source dictionaries, kept so `fjdict --decompile` can give them back. */
typedef struct fj_srcdict_rec {
    uint32_t name_off, name_len;
    uint32_t first_entry, entry_count;
} fj_srcdict_rec;

typedef struct fj_srcentry_rec {
    uint32_t key_off, key_len;
    uint32_t values_off, values_len; /* values joined by single spaces */
} fj_srcentry_rec;

/* Bit index for "in matcher `salt` (its index), some key starts with cp1
 * cp2": a cheap test that rules out most trie walks at the second character.
 * It needs only the two code points, so it runs alongside the table lookup;
 * cp1 picks a 512-bit cache line, so the tests for a common character stay in
 * cache. */
static inline uint32_t fj_bigram_hash(uint32_t salt, uint32_t cp1, uint32_t cp2)
{
    uint32_t line = ((cp1 ^ salt << 21) * 0x9E3779B1u) >> (32 - 12); /* 4096 lines */
    return line << 9 | ((cp2 ^ cp2 >> 9) & 511u);
}

/* The two bit indexes of the pair cp1 cp2 in CHNG, for matcher `salt`: in
 * the low and the high half of the result. As in fj_bigram_hash, cp1 picks a
 * 512-bit cache line, so one line answers for a common character; two bits
 * in it, both set, keep false positives rare even for a first character with
 * hundreds of pairs (干). */
static inline uint32_t fj_change_line(uint32_t salt, uint32_t cp1)
{
    return ((cp1 ^ salt << 21) * 0x9E3779B1u) >> (32 - 12);
}
static inline uint32_t fj_change_pos1(uint32_t cp2) { return (cp2 ^ cp2 >> 9) & 511u; }
static inline uint32_t fj_change_pos2(uint32_t cp2) { return (cp2 * 0x2545F491u) >> 23; }
static inline uint64_t fj_change_hash(uint32_t salt, uint32_t cp1, uint32_t cp2)
{
    uint32_t line = fj_change_line(salt, cp1) << 9;
    return (line | fj_change_pos1(cp2)) | (uint64_t)(line | fj_change_pos2(cp2)) << 32;
}

/* The trigram filter's first argument: the first two characters, mixed. */
static inline uint32_t fj_pair_mix(uint32_t cp1, uint32_t cp2)
{
    return (cp1 * 0x2545F491u) ^ cp2;
}

/* The edges out of first-character nodes live in open-addressing tables,
 * one per matcher (a power-of-two number of u64 slots, linear probing from
 * fj_edge_hash & mask; 0 is an empty slot), because those nodes can have
 * thousands of children. Slot: cp | parent << 21 | child << 42. */
#define FJ_EDGE_CP(s) ((uint32_t)((s) & 0x1FFFFFu))
#define FJ_EDGE_PARENT(s) ((uint32_t)(((s) >> 21) & 0x1FFFFFu))
#define FJ_EDGE_CHILD(s) ((uint32_t)((s) >> 42))
#define FJ_EDGE_SLOT(cp, parent, child) \
    ((uint64_t)(cp) | (uint64_t)(parent) << 21 | (uint64_t)(child) << 42)
#define FJ_MAX_NODES (1u << 21)
static inline uint32_t fj_edge_hash(uint32_t node, uint32_t cp)
{
    return (node * 0x2545F491u) ^ (cp * 0x9E3779B1u) ^ (cp >> 7);
}

/* 64-bit checksum over a byte range, read as little-endian words. */
static inline uint64_t fj_load_le64(const unsigned char *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t w;
    __builtin_memcpy(&w, p, 8);
    return w;
#else
    uint64_t w = 0;
    for (int b = 0; b < 8; b++)
        w |= (uint64_t)p[b] << (8 * b);
    return w;
#endif
}

static inline uint64_t fj_checksum(const unsigned char *p, uint64_t n)
{
    /* Fletcher-style sums in four lanes: two additions per word, which the
     * compiler vectorizes. */
    uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, b0 = 0, b1 = 0, b2 = 0, b3 = 0;
    uint64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        a0 += fj_load_le64(p + i);
        a1 += fj_load_le64(p + i + 8);
        a2 += fj_load_le64(p + i + 16);
        a3 += fj_load_le64(p + i + 24);
        b0 += a0;
        b1 += a1;
        b2 += a2;
        b3 += a3;
    }
    uint64_t r = n * 0x9E3779B97F4A7C15ull;
    const uint64_t lanes[8] = {a0, a1, a2, a3, b0, b1, b2, b3};
    for (int l = 0; l < 8; l++) {
        r = (r ^ lanes[l]) * 0xFF51AFD7ED558CCDull;
        r ^= r >> 33;
    }
    for (; i < n; i++)
        r = (r ^ p[i]) * 0x100000001B3ull;
    r ^= r >> 33;
    return r;
}

/* Where the body starts, for an image of `sections` sections and `chunks`
 * chunks. */
static inline uint64_t fj_image_body_offset(uint32_t sections, uint32_t chunks)
{
    return FJ_IMAGE_HEADER_SIZE + (uint64_t)sections * 24u + (uint64_t)chunks * 8u;
}

/* Writes the chunk sums and the header's checksum of an image whose header
 * already holds its section and chunk counts (the compiler, and tests that
 * damage an image on purpose). Little-endian hosts only, like the reader. */
static inline void fj_image_seal(unsigned char *img, uint64_t size)
{
    uint32_t sections, chunks;
    __builtin_memcpy(&sections, img + 12, 4);
    __builtin_memcpy(&chunks, img + 32, 4);
    uint64_t body = fj_image_body_offset(sections, chunks);
    if (body > size)
        return;
    unsigned char *sums = img + FJ_IMAGE_HEADER_SIZE + (uint64_t)sections * 24u;
    for (uint32_t i = 0; i < chunks; i++) {
        uint64_t at = body + (uint64_t)i * FJ_CHUNK_SIZE;
        uint64_t n = at >= size ? 0 : size - at < FJ_CHUNK_SIZE ? size - at : FJ_CHUNK_SIZE;
        uint64_t sum = fj_checksum(img + (at < size ? at : size), n);
        __builtin_memcpy(sums + 8u * i, &sum, 8);
    }
    uint64_t sum = fj_checksum(img + FJ_IMAGE_HEADER_SIZE, body - FJ_IMAGE_HEADER_SIZE);
    __builtin_memcpy(img + 24, &sum, 8);
}

#endif
