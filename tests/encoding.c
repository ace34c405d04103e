/* Tests (cmocka) for libfanjian-formats' encodings (formats/encoding.c): detection,
 * encoding names and the streaming recoder.
 *
 * The fixtures are made here, at run time, by encoding the UTF-8 prose
 * below with glibc's iconv; the prose was written for these tests.
 * Environment: FANJIAN_TEST_SEED, FANJIAN_TEST_QUICK. */
#include "testutil.h"

#include <iconv.h>
#include <pthread.h>

#include "fanjian-formats.h"

/* ---- texts -------------------------------------------------------------------- */

static const char SIMPLIFIED[] =
    "清晨的雨下得很细，街上的行人撑着伞慢慢走过。老陈推开面馆的木门，把昨晚洗好的碗一只只摆"
    "回架子上。他在这条巷子里开店已经二十多年了，看着对面的裁缝铺换成了书店，又从书店换成了"
    "卖手机的小铺子。只有他的面馆还是老样子：六张桌子，一口大锅，墙上挂着一块写着“手工拉面”"
    "的旧牌子。\n"
    "七点刚过，第一位客人就进来了。是住在楼上的林老师，她每天早上都要一碗清汤面，多放葱，不"
    "要辣。老陈一边揉面一边问她学校最近忙不忙。林老师笑着说，快考试了，孩子们比老师还紧张，"
    "昨天有个学生在作文里写，希望自己变成一只猫，这样就不用背课文了。\n"
    "九点以后，店里渐渐安静下来。老陈坐在门口，看雨水顺着屋檐落进石板缝里。他想起年轻时从北"
    "方来到这座城市，身上只有一个包和三百块钱。那时候他以为自己只会待一两年，赚够了钱就回家"
    "乡去。可是日子一天天过去，他娶了妻子，有了女儿，女儿又去了更远的地方读书。\n"
    "中午，女儿打来电话，说下个月要带朋友回来吃饭。老陈问朋友喜欢吃什么，女儿说，什么都行，"
    "就想尝尝你做的牛肉面。挂了电话，他在小本子上认真地写下：周六，牛肉要提前一天炖好，汤里"
    "少放盐，桌子擦干净。写完，他又看了一遍，才把本子放回抽屉里。\n";

static const char TRADITIONAL[] =
    "清晨的雨下得很細，街上的行人撐著傘慢慢走過。老陳推開麵館的木門，把昨晚洗好的碗一隻只擺"
    "回架子上。他在這條巷子裡開店已經二十多年了，看著對面的裁縫鋪換成了書店，又從書店換成了"
    "賣手機的小鋪子。只有他的麵館還是老樣子：六張桌子，一口大鍋，牆上掛著一塊寫著「手工拉麵」"
    "的舊牌子。\n"
    "七點剛過，第一位客人就進來了。是住在樓上的林老師，她每天早上都要一碗清湯麵，多放蔥，不"
    "要辣。老陳一邊揉麵一邊問她學校最近忙不忙。林老師笑著說，快考試了，孩子們比老師還緊張，"
    "昨天有個學生在作文裡寫，希望自己變成一隻貓，這樣就不用背課文了。\n"
    "九點以後，店裡漸漸安靜下來。老陳坐在門口，看雨水順著屋簷落進石板縫裡。他想起年輕時從北"
    "方來到這座城市，身上只有一個包和三百塊錢。那時候他以為自己只會待一兩年，賺夠了錢就回家"
    "鄉去。可是日子一天天過去，他娶了妻子，有了女兒，女兒又去了更遠的地方讀書。\n"
    "中午，女兒打來電話，說下個月要帶朋友回來吃飯。老陳問朋友喜歡吃什麼，女兒說，什麼都行，"
    "就想嘗嘗你做的牛肉麵。掛了電話，他在小本子上認真地寫下：週六，牛肉要提前一天燉好，湯裡"
    "少放鹽，桌子擦乾淨。寫完，他又看了一遍，才把本子放回抽屜裡。\n";

/* Cantonese as written in Hong Kong: 㗎 咗 啲 嘅 哋 are HKSCS, not Big5. */
static const char HONG_KONG[] =
    "佢哋話今日落雨，我哋唔好出街喇。呢度啲嘢好平㗎，你要唔要買啲返屋企？\n"
    "咁你食咗飯未呀？我啱啱食咗一碗雲吞麵，仲飲咗杯奶茶。\n"
    "佢嘅書喺邊度？我記得佢擺咗喺枱面，而家搵唔到。\n";

/* Simplified text with characters GBK has and GB2312 lacks (镕 喆 堃 赟),
 * and a traditional 這裡, as GBK files from the mainland carry them. */
static const char GBK_ONLY[] = "朱镕基、张喆和王堃都来了，李赟说這裡的风景很好。\n";

/* Short lines, one sentence each (detection of short inputs). */
static const char *const SHORT_SIMPLIFIED[] = {
    "明天早上八点在学校门口集合，请大家不要迟到。",
    "这本书我已经看了三遍，每次都有新的感受。",
    "妈妈说晚饭做好了，让我们赶快洗手过来吃。",
    "下周的会议改到星期四下午，地点不变。",
    "他把旧自行车修好以后，送给了隔壁的小朋友。",
    "雨停了，远处的山上挂着一道彩虹。",
    "请把文件发到我的邮箱里。",
    "第一章 风起",
};
static const char *const SHORT_TRADITIONAL[] = {
    "明天早上八點在學校門口集合，請大家不要遲到。",
    "這本書我已經看了三遍，每次都有新的感受。",
    "媽媽說晚飯做好了，讓我們趕快洗手過來吃。",
    "下週的會議改到星期四下午，地點不變。",
    "他把舊腳踏車修好以後，送給了隔壁的小朋友。",
    "雨停了，遠處的山上掛著一道彩虹。",
    "請把檔案寄到我的信箱裡。",
    "第一章 風起",
};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---- helpers ------------------------------------------------------------------ */

/* `text` in `encoding`, by glibc's iconv (the test's own reference). */
static char *encode(const char *encoding, const char *text, size_t len, size_t *out_len)
{
    iconv_t cd = iconv_open(encoding, "UTF-8");
    assert_true(cd != (iconv_t)-1);
    size_t cap = len * 4 + 16;
    char *out = malloc(cap);
    assert_non_null(out);
    char *in = (char *)(uintptr_t)text, *o = out;
    size_t in_left = len, out_left = cap;
    size_t rc = iconv(cd, &in, &in_left, &o, &out_left);
    if (rc == (size_t)-1)
        fail_msg("iconv cannot write the fixture in %s (at byte %zu)", encoding, len - in_left);
    assert_int_not_equal(iconv(cd, NULL, NULL, &o, &out_left), (size_t)-1);
    iconv_close(cd);
    *out_len = cap - out_left;
    return out;
}

static char *encode_str(const char *encoding, const char *text, size_t *out_len)
{
    return encode(encoding, text, strlen(text), out_len);
}

/* `text` repeated until it is at least `min_bytes` long in UTF-8. */
static char *repeat_text(const char *text, size_t min_bytes, size_t *out_len)
{
    tbuf b = {0};
    while (b.len < min_bytes)
        tb_adds(&b, text);
    *out_len = b.len;
    return b.p;
}

static void assert_bytes(const char *got, size_t got_len, const char *want, size_t want_len)
{
    if (got_len != want_len || memcmp(got, want, want_len) != 0) {
        size_t i = 0;
        while (i < got_len && i < want_len && got[i] == want[i])
            i++;
        fail_msg("bytes differ at %zu (got %zu bytes, want %zu)", i, got_len, want_len);
    }
}

/* How the input is cut into feeds. */
enum { WHOLE = 0, BYTE_BY_BYTE = 1 };          /* else: random pieces, seeded */

typedef struct recoded {
    int rc;                  /* 0, or -1 from the feed or finish that failed */
    tbuf out;
    fjf_error err;
    unsigned long long replaced;
} recoded;

static recoded recode(const char *from, const char *to, unsigned flags, const char *data,
                      size_t len, uint64_t chunking)
{
    recoded r;
    memset(&r, 0, sizeof r);
    tb_add(&r.out, "", 0);
    fjf_recoder *rec;
    if (fjf_recoder_new(from, to, flags, tb_write, &r.out, &rec, &r.err) != 0)
        fail_msg("fjf_recoder_new(%s, %s): %s", from, to, r.err.message);
    uint64_t seed = chunking;
    size_t pos = 0;
    while (pos < len && r.rc == 0) {
        size_t n = len - pos;
        if (chunking == BYTE_BY_BYTE)
            n = 1;
        else if (chunking != WHOLE)
            n = 1 + t_below(&seed, n < 300 ? n : 300);
        r.rc = fjf_recoder_feed(rec, data + pos, n, &r.err);
        pos += n;
    }
    if (r.rc == 0)
        r.rc = fjf_recoder_finish(rec, &r.err);
    r.replaced = fjf_recoder_replaced(rec);
    fjf_recoder_free(rec);
    return r;
}

static void assert_recodes_to(const char *from, const char *to, unsigned flags, const char *in,
                              size_t in_len, const char *want, size_t want_len)
{
    const uint64_t chunkings[] = {WHOLE, BYTE_BY_BYTE, t_seed(), t_seed() + 1};
    for (size_t i = 0; i < COUNT(chunkings); i++) {
        recoded r = recode(from, to, flags, in, in_len, chunkings[i]);
        if (r.rc != 0)
            fail_msg("%s to %s (chunking %zu): %s", from, to, i, r.err.message);
        assert_bytes(r.out.p, r.out.len, want, want_len);
        tb_free(&r.out);
    }
}

static fjf_encoding detect(const char *data, size_t len, int complete)
{
    fjf_encoding enc;
    fjf_error err;
    if (fjf_encoding_detect(data, len, complete, &enc, &err) != 0)
        fail_msg("detection failed: %s", err.message);
    return enc;
}

/* Detects text encoded in `encoding` as that encoding, from `source`. */
static void assert_detected(const char *encoding, const char *text, const char *want_source)
{
    size_t len;
    char *bytes = encode_str(encoding, text, &len);
    fjf_encoding enc = detect(bytes, len, 1);
    if (strcmp(enc.name, encoding) != 0)
        fail_msg("%zu bytes of %s taken for %s (%s)", len, encoding, enc.name, enc.source);
    assert_int_equal(enc.bom_len, 0);
    if (want_source)
        assert_string_equal(enc.source, want_source);
    free(bytes);
}

/* ---- detection -------------------------------------------------------------------- */

static void test_detect_empty_and_ascii(void **state)
{
    (void)state;
    fjf_encoding enc = detect("", 0, 1);
    assert_string_equal(enc.name, "UTF-8");
    assert_string_equal(enc.source, "utf-8");
    enc = detect("Chapter 1\r\nIt was a quiet morning.\n", 36, 1);
    assert_string_equal(enc.name, "UTF-8");
    assert_string_equal(enc.source, "utf-8");
    assert_int_equal(enc.bom_len, 0);
}

static void test_detect_utf8(void **state)
{
    (void)state;
    fjf_encoding enc = detect(SIMPLIFIED, strlen(SIMPLIFIED), 1);
    assert_string_equal(enc.name, "UTF-8");
    assert_string_equal(enc.source, "utf-8");
    assert_int_equal(enc.bom_len, 0);

    tbuf b = {0};
    tb_adds(&b, "\xEF\xBB\xBF");
    tb_adds(&b, TRADITIONAL);
    enc = detect(b.p, b.len, 1);
    assert_string_equal(enc.name, "UTF-8");
    assert_string_equal(enc.source, "bom");
    assert_int_equal(enc.bom_len, 3);
    tb_free(&b);
}

static void test_detect_utf16_with_bom(void **state)
{
    (void)state;
    static const struct {
        const char *encoding, *bom;
    } cases[] = {{"UTF-16LE", "\xFF\xFE"}, {"UTF-16BE", "\xFE\xFF"}};
    for (size_t i = 0; i < COUNT(cases); i++) {
        size_t len;
        char *body = encode_str(cases[i].encoding, SIMPLIFIED, &len);
        tbuf b = {0};
        tb_add(&b, cases[i].bom, 2);
        tb_add(&b, body, len);
        fjf_encoding enc = detect(b.p, b.len, 1);
        assert_string_equal(enc.name, cases[i].encoding);
        assert_string_equal(enc.source, "bom");
        assert_int_equal(enc.bom_len, 2);
        free(body);
        tb_free(&b);
    }
}

static void test_detect_utf16_without_bom(void **state)
{
    (void)state;
    /* Mostly ASCII, so valid UTF-8 too: the NULs decide. */
    const char *text = "Chapter 1: 风起\nIt rained all morning.\n";
    size_t len;
    char *le = encode_str("UTF-16LE", text, &len);
    fjf_encoding enc = detect(le, len, 1);
    assert_string_equal(enc.name, "UTF-16LE");
    assert_int_equal(enc.bom_len, 0);
    free(le);
    char *be = encode_str("UTF-16BE", text, &len);
    enc = detect(be, len, 1);
    assert_string_equal(enc.name, "UTF-16BE");
    free(be);
}

static void test_detect_gb18030_bom(void **state)
{
    (void)state;
    size_t len;
    char *body = encode_str("GB18030", SIMPLIFIED, &len);
    tbuf b = {0};
    tb_add(&b, "\x84\x31\x95\x33", 4);
    tb_add(&b, body, len);
    fjf_encoding enc = detect(b.p, b.len, 1);
    assert_string_equal(enc.name, "GB18030");
    assert_string_equal(enc.source, "bom");
    assert_int_equal(enc.bom_len, 4);
    free(body);
    tb_free(&b);
}

/* A chapter of 2 to 20 KB, whole and as the first bytes of a longer file. */
static void test_detect_chapters(void **state)
{
    (void)state;
    static const struct {
        const char *encoding, *text;
    } cases[] = {{"GB18030", SIMPLIFIED}, {"GBK", SIMPLIFIED}, {"BIG5", TRADITIONAL}};
    const size_t sizes[] = {2000, 6000, 20000};
    for (size_t c = 0; c < COUNT(cases); c++)
        for (size_t s = 0; s < COUNT(sizes); s++) {
            size_t text_len, len;
            char *text = repeat_text(cases[c].text, sizes[s], &text_len);
            char *bytes = encode(cases[c].encoding, text, text_len, &len);
            const char *want = strcmp(cases[c].encoding, "GBK") == 0 ? "GB18030"
                                                                      : cases[c].encoding;
            fjf_encoding enc = detect(bytes, len, 1);
            assert_string_equal(enc.name, want);
            assert_string_equal(enc.source, "detector");
            /* Cut anywhere, even inside a character: complete = 0. */
            for (size_t cut = len / 2; cut < len / 2 + 4; cut++) {
                enc = detect(bytes, cut, 0);
                assert_string_equal(enc.name, want);
            }
            free(text);
            free(bytes);
        }
}

static void test_detect_gbk_only_text(void **state)
{
    (void)state;
    size_t len;
    char *gbk = encode_str("GBK", GBK_ONLY, &len);
    /* The fixture needs GBK: GB2312 cannot hold it. */
    iconv_t cd = iconv_open("GB2312", "UTF-8");
    char out[256], *in = (char *)(uintptr_t)GBK_ONLY, *o = out;
    size_t in_left = strlen(GBK_ONLY), out_left = sizeof out;
    assert_int_equal(iconv(cd, &in, &in_left, &o, &out_left), (size_t)-1);
    iconv_close(cd);

    fjf_encoding enc = detect(gbk, len, 1);
    assert_string_equal(enc.name, "GB18030");
    assert_recodes_to(enc.name, "UTF-8", 0, gbk, len, GBK_ONLY, strlen(GBK_ONLY));
    free(gbk);
}

static void test_detect_big5_traditional(void **state)
{
    (void)state;
    assert_detected("BIG5", TRADITIONAL, "detector");
    /* Hong Kong text needs HKSCS: BIG5 cannot decode 㗎 and the rest. */
    assert_detected("BIG5-HKSCS", HONG_KONG, NULL);
}

/* Why BIG5, not BIG5-HKSCS, is what "big5" means: glibc's BIG5 reads and
 * writes Taiwan's punctuation as Taiwan's Big5 (CP950) has it, ～ as
 * U+FF5E and ‧ as U+2027, which BIG5-HKSCS reads as U+223C and U+2022 and
 * cannot write at all. HKSCS is for what BIG5 cannot decode. */
static void test_big5_is_the_default_for_taiwan(void **state)
{
    (void)state;
    const char *text = "約翰‧史密斯說：「好啊～明天見。」";
    size_t len;
    char *big5 = encode_str("BIG5", text, &len);
    assert_memory_equal(big5 + 4, "\xA1\x45", 2);  /* ‧ */

    iconv_t cd = iconv_open("BIG5-HKSCS", "UTF-8");
    char out[64], *in = (char *)(uintptr_t) "～", *o = out;
    size_t in_left = 3, out_left = sizeof out;
    assert_int_equal(iconv(cd, &in, &in_left, &o, &out_left), (size_t)-1);
    iconv_close(cd);

    recoded hk = recode("BIG5-HKSCS", "UTF-8", 0, "\xA1\xE3\xA1\x45", 4, WHOLE);
    assert_int_equal(hk.rc, 0);
    assert_string_equal(hk.out.p, "\xE2\x88\xBC\xE2\x80\xA2"); /* U+223C U+2022 */
    tb_free(&hk.out);

    fjf_encoding enc = detect(big5, len, 1);
    assert_string_equal(enc.name, "BIG5");
    assert_recodes_to("BIG5", "UTF-8", 0, big5, len, text, strlen(text));
    char buf[32];
    assert_string_equal(fjf_encoding_canonical("big5", buf), "BIG5");
    free(big5);
}

/* Big5-ETEN's circled numbers (C6A1...) are private use to glibc's BIG5,
 * real characters to BIG5-HKSCS. */
static void test_detect_big5_eten_symbols(void **state)
{
    (void)state;
    const char *text = "①清晨的雨下得很細，②街上的行人撐著傘慢慢走過。";
    size_t len;
    char *bytes = encode_str("BIG5-HKSCS", text, &len);
    assert_memory_equal(bytes, "\xC6\xA1", 2);
    fjf_encoding enc = detect(bytes, len, 1);
    assert_string_equal(enc.name, "BIG5-HKSCS");
    /* On one line, whether uchardet or the weighing named it depends on
     * the uchardet version: only the answer is asserted. */
    assert_true(strcmp(enc.source, "detector") == 0 || strcmp(enc.source, "fallback") == 0);
    free(bytes);
}

/* One line is enough: measured on these lines (and on some 3,000 lines of
 * other text), every line of 7 or more Chinese characters is detected
 * right in either encoding; below that a GB18030 and a Big5 reading can
 * both be plausible (6 characters: 關閉觸控模擬 reads as 闽超牟北家览). */
static void test_detect_short_lines(void **state)
{
    (void)state;
    for (size_t i = 0; i < COUNT(SHORT_SIMPLIFIED); i++)
        assert_detected("GB18030", SHORT_SIMPLIFIED[i], NULL);
    for (size_t i = 0; i < COUNT(SHORT_TRADITIONAL); i++)
        assert_detected("BIG5", SHORT_TRADITIONAL[i], NULL);
    /* Each prefix of 7 characters and more of a line. */
    const char *line = SHORT_TRADITIONAL[2];
    for (size_t end = 7 * 3; end <= strlen(line); end += 3) {
        size_t len;
        char *bytes = encode("BIG5", line, end, &len);
        fjf_encoding enc = detect(bytes, len, 1);
        if (strcmp(enc.name, "BIG5") != 0)
            fail_msg("%zu characters taken for %s", end / 3, enc.name);
        free(bytes);
    }
}

static void test_detect_invalid_byte(void **state)
{
    (void)state;
    size_t text_len, len;
    char *text = repeat_text(SIMPLIFIED, 4000, &text_len);
    char *bytes = encode("GB18030", text, text_len, &len);
    /* 0xFF begins a character in none of the candidates. */
    size_t at = 0;
    while (at < 1234 || (unsigned char)bytes[at] < 0x80)
        at += (unsigned char)bytes[at] < 0x80 ? 1 : 2;
    bytes[at] = (char)0xFF;
    fjf_encoding enc;
    fjf_error err;
    assert_int_equal(fjf_encoding_detect(bytes, len, 1, &enc, &err), -1);
    assert_int_equal(err.offset, at);
    char want[64];
    snprintf(want, sizeof want, "not valid GB18030 at byte %zu", at);
    assert_string_equal(err.message, want);
    assert_string_equal(enc.name, "GB18030"); /* the best guess, for a lossy caller */
    free(text);
    free(bytes);
}

/* Bytes that decode as nothing Chinese are damaged UTF-8, never Western
 * single-byte text (uchardet says WINDOWS-1252 for a stray 0x80). */
static void test_detect_stray_bytes_are_utf8(void **state)
{
    (void)state;
    static const struct {
        const char *bytes;
        size_t bad_at;
    } cases[] = {
        {"\x80", 0},
        {"caf\xe9 au lait", 3},
        {"\xe5\xa4\xb4\xe5\x8f\x91\xff\xe5\xb9\xb2\xe7\x87\xa5", 6}, /* 头发 0xFF 干燥 */
        {"abc\xff\xfe\xfd", 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fjf_encoding enc;
        fjf_error err;
        assert_int_equal(fjf_encoding_detect(cases[i].bytes, strlen(cases[i].bytes), 1, &enc,
                                             &err), -1);
        assert_string_equal(enc.name, "UTF-8");
        assert_int_equal(err.offset, cases[i].bad_at);
    }
}

/* A GB18030 file damaged near its start: its few errors, against UTF-8's
 * many, still name GB18030. */
static void test_detect_damage_near_start(void **state)
{
    (void)state;
    size_t text_len, len;
    char *text = repeat_text(SIMPLIFIED, 3000, &text_len);
    char *bytes = encode("GB18030", text, text_len, &len);
    size_t at = 0;
    while ((unsigned char)bytes[at] < 0x80)
        at++;
    at += 2; /* after the first two-byte character */
    bytes[at] = (char)0xFF;
    fjf_encoding enc;
    fjf_error err;
    assert_int_equal(fjf_encoding_detect(bytes, len, 1, &enc, &err), -1);
    assert_string_equal(enc.name, "GB18030");
    assert_int_equal(err.offset, at);
    free(text);
    free(bytes);
}

static void test_detect_cut_sample(void **state)
{
    (void)state;
    /* GB18030 ending inside a four-byte character (😀 94 39 FC 36). */
    tbuf b = {0};
    size_t len;
    char *body = encode_str("GB18030", SIMPLIFIED, &len);
    tb_add(&b, body, len);
    tb_add(&b, "\x94\x39", 2);
    fjf_encoding enc = detect(b.p, b.len, 0);
    assert_string_equal(enc.name, "GB18030");
    fjf_error err;
    assert_int_equal(fjf_encoding_detect(b.p, b.len, 1, &enc, &err), -1);
    assert_int_equal(err.offset, len);
    assert_non_null(strstr(err.message, "file ends inside a GB18030 character"));
    tb_free(&b);
    free(body);

    /* UTF-8 ending inside 中 (E4 B8 AD). */
    tb_adds(&b, SIMPLIFIED);
    tb_add(&b, "\xE4\xB8", 2);
    enc = detect(b.p, b.len, 0);
    assert_string_equal(enc.name, "UTF-8");
    assert_string_equal(enc.source, "utf-8");
    assert_int_equal(fjf_encoding_detect(b.p, b.len, 1, &enc, &err), -1);
    assert_string_equal(enc.name, "UTF-8");
    assert_int_equal(err.offset, strlen(SIMPLIFIED));
    tb_free(&b);
}

/* Valid UTF-8 with one bad byte stays UTF-8 (an error), though GB18030
 * would decode it all, wrongly. */
static void test_detect_damaged_utf8(void **state)
{
    (void)state;
    tbuf b = {0};
    tb_add(&b, TRADITIONAL, 300);
    tb_add(&b, "\xFF", 1);
    tb_adds(&b, TRADITIONAL + 300);
    fjf_encoding enc;
    fjf_error err;
    assert_int_equal(fjf_encoding_detect(b.p, b.len, 1, &enc, &err), -1);
    assert_string_equal(enc.name, "UTF-8");
    assert_int_equal(err.offset, 300);
    assert_string_equal(err.message, "not valid UTF-8 at byte 300");
    tb_free(&b);
}

static void test_detect_other_encodings(void **state)
{
    (void)state;
    assert_detected("EUC-TW", TRADITIONAL, "detector");
    /* One sentence: the answer, not which step gave it (that depends on
     * the uchardet version). */
    assert_detected("SHIFT_JIS", "今日は雨が降っているので、家で本を読んでいます。明日は晴れる"
                                 "といいですね。",
                    NULL);
}

/* ---- names ------------------------------------------------------------------------ */

static void test_canonical_names(void **state)
{
    (void)state;
    static const struct {
        const char *name, *want;
    } cases[] = {
        {"utf8", "UTF-8"},         {"UTF-8", "UTF-8"},        {"Utf-8", "UTF-8"},
        {"gbk", "GB18030"},        {"GB2312", "GB18030"},     {"cp936", "GB18030"},
        {"gb18030", "GB18030"},    {"big5", "BIG5"},          {"CP950", "BIG5"},
        {"big5hkscs", "BIG5-HKSCS"}, {"Big5-HKSCS", "BIG5-HKSCS"}, {"utf16", "UTF-16"},
        {"UTF-16", "UTF-16"},      {"utf-16le", "UTF-16LE"},  {"UTF-16BE", "UTF-16BE"},
        {"euc-tw", "EUC-TW"},      {"shift_jis", "SHIFT_JIS"}, {"iso-8859-1", "ISO-8859-1"},
    };
    char buf[32];
    for (size_t i = 0; i < COUNT(cases); i++) {
        const char *got = fjf_encoding_canonical(cases[i].name, buf);
        if (!got || strcmp(got, cases[i].want) != 0)
            fail_msg("%s: got %s, want %s", cases[i].name, got ? got : "NULL", cases[i].want);
        assert_ptr_equal(got, buf);
    }
    assert_null(fjf_encoding_canonical("no-such-encoding", buf));
    assert_null(fjf_encoding_canonical("", buf));
    assert_null(fjf_encoding_canonical("UTF-8//IGNORE", buf));
    assert_null(fjf_encoding_canonical("an-encoding-name-longer-than-31-bytes", buf));
}

static void test_recoder_unknown_encoding(void **state)
{
    (void)state;
    tbuf out = {0};
    fjf_recoder *r = (fjf_recoder *)(uintptr_t)1; /* must be cleared */
    fjf_error err;
    assert_int_equal(fjf_recoder_new("no-such-encoding", "UTF-8", 0, tb_write, &out, &r, &err),
                     -1);
    assert_null(r);
    assert_non_null(strstr(err.message, "no-such-encoding"));
}

/* ---- round trips ---------------------------------------------------------------- */

static void test_roundtrip_gb18030_text(void **state)
{
    (void)state;
    /* Two-byte (é € ·) and four-byte forms, in and beyond the BMP. */
    static const struct {
        const char *utf8, *gb;
    } chars[] = {
        {"é", "\xA8\xA6"},           {"€", "\xA2\xE3"},           {"·", "\xA1\xA4"},
        {"ö", "\x81\x30\x8B\x32"},   {"©", "\x81\x30\x84\x38"},   {"ก", "\x81\x32\xCE\x39"},
        {"😀", "\x94\x39\xFC\x36"},  {"𠀀", "\x95\x32\x82\x36"},  {"\xEF\xBF\xBD", "\x84\x31\xA4\x37"},
    };
    tbuf utf8 = {0}, gb = {0};
    for (size_t i = 0; i < COUNT(chars); i++) {
        assert_recodes_to("UTF-8", "GB18030", 0, chars[i].utf8, strlen(chars[i].utf8),
                          chars[i].gb, strlen(chars[i].gb));
        tb_adds(&utf8, chars[i].utf8);
        tb_adds(&gb, chars[i].gb);
        tb_adds(&utf8, "清晨的雨");
        tb_adds(&gb, "\xC7\xE5\xB3\xBF\xB5\xC4\xD3\xEA");
    }
    size_t len;
    char *prose = encode_str("GB18030", SIMPLIFIED, &len);
    tb_adds(&utf8, SIMPLIFIED);
    tb_add(&gb, prose, len);
    assert_recodes_to("GB18030", "UTF-8", 0, gb.p, gb.len, utf8.p, utf8.len);
    assert_recodes_to("UTF-8", "GB18030", 0, utf8.p, utf8.len, gb.p, gb.len);
    free(prose);
    tb_free(&utf8);
    tb_free(&gb);
}

static void add_utf8(tbuf *b, uint32_t c)
{
    unsigned char seq[4];
    size_t n = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    static const unsigned char lead[5] = {0, 0x00, 0xC0, 0xE0, 0xF0};
    for (size_t i = n - 1; i > 0; i--, c >>= 6)
        seq[i] = (unsigned char)(0x80 | (c & 0x3F));
    seq[0] = (unsigned char)(lead[n] | c);
    tb_add(b, seq, n);
}

/* Every BMP character and a stretch beyond: GB18030 → UTF-8 → GB18030 is
 * byte for byte, through buffers many times the recoder's. */
static void test_roundtrip_gb18030_everything(void **state)
{
    (void)state;
    tbuf utf8 = {0};
    for (uint32_t c = 0x80; c < 0x30000; c += c < 0x10000 ? 1 : 7)
        if (c < 0xD800 || c > 0xF8FF) /* surrogates; private use, which GB18030-2022 remaps */
            add_utf8(&utf8, c);
    size_t gb_len;
    char *gb = encode("GB18030", utf8.p, utf8.len, &gb_len);
    recoded to_utf8 = recode("GB18030", "UTF-8", 0, gb, gb_len, t_seed());
    assert_int_equal(to_utf8.rc, 0);
    assert_bytes(to_utf8.out.p, to_utf8.out.len, utf8.p, utf8.len);
    recoded back = recode("UTF-8", "GB18030", 0, to_utf8.out.p, to_utf8.out.len, WHOLE);
    assert_int_equal(back.rc, 0);
    assert_bytes(back.out.p, back.out.len, gb, gb_len);
    free(gb);
    tb_free(&utf8);
    tb_free(&to_utf8.out);
    tb_free(&back.out);
}

static void test_roundtrip_big5(void **state)
{
    (void)state;
    size_t len;
    char *big5 = encode_str("BIG5", TRADITIONAL, &len);
    assert_recodes_to("BIG5", "UTF-8", 0, big5, len, TRADITIONAL, strlen(TRADITIONAL));
    assert_recodes_to("UTF-8", "BIG5", 0, TRADITIONAL, strlen(TRADITIONAL), big5, len);
    free(big5);

    /* Every two-byte code BIG5 decodes comes back, but for glibc's ten
     * duplicates (two forms of 十 and 卅, and box drawing). */
    static const unsigned duplicates[] = {0xA2CC, 0xA2CE, 0xF9E9, 0xF9EA, 0xF9EB,
                                          0xF9F9, 0xF9FA, 0xF9FB, 0xF9FC, 0xF9FD};
    tbuf all = {0};
    size_t codes = 0;
    for (unsigned lead = 0xA1; lead <= 0xF9; lead++)
        for (unsigned trail = 0x40; trail <= 0xFE; trail++) {
            if (trail > 0x7E && trail < 0xA1)
                continue;
            unsigned code = lead << 8 | trail;
            int dup = 0;
            for (size_t i = 0; i < COUNT(duplicates); i++)
                dup |= duplicates[i] == code;
            char pair[2] = {(char)lead, (char)trail};
            recoded one = recode("BIG5", "UTF-8", 0, pair, 2, WHOLE);
            if (one.rc == 0 && !dup) {
                tb_add(&all, pair, 2);
                codes++;
            }
            tb_free(&one.out);
        }
    assert_true(codes > 13000);
    recoded to_utf8 = recode("BIG5", "UTF-8", 0, all.p, all.len, t_seed());
    assert_int_equal(to_utf8.rc, 0);
    recoded back = recode("UTF-8", "BIG5", 0, to_utf8.out.p, to_utf8.out.len, t_seed() + 2);
    assert_int_equal(back.rc, 0);
    assert_bytes(back.out.p, back.out.len, all.p, all.len);
    tb_free(&all);
    tb_free(&to_utf8.out);
    tb_free(&back.out);
}

/* 88 62 is Ê with a macron, two characters: the encoder holds Ê until it
 * sees what follows, and must give it up at the end. */
static void test_roundtrip_big5_hkscs(void **state)
{
    (void)state;
    size_t len;
    char *hk = encode_str("BIG5-HKSCS", HONG_KONG, &len);
    assert_recodes_to("BIG5-HKSCS", "UTF-8", 0, hk, len, HONG_KONG, strlen(HONG_KONG));
    assert_recodes_to("UTF-8", "BIG5-HKSCS", 0, HONG_KONG, strlen(HONG_KONG), hk, len);
    free(hk);
    const char *combined = "\xC3\x8A\xCC\x84\xC3\x8A"; /* Ê̄Ê */
    assert_recodes_to("BIG5-HKSCS", "UTF-8", 0, "\x88\x62\x88\x66", 4, combined, 6);
    assert_recodes_to("UTF-8", "BIG5-HKSCS", 0, combined, 6, "\x88\x62\x88\x66", 4);
    assert_recodes_to("UTF-8", "BIG5-HKSCS", 0, "\xC3\x8A", 2, "\x88\x66", 2);
}

/* ---- chunking ------------------------------------------------------------------- */

/* Any cutting into feeds gives the same output, the same count of
 * replacements and the same error. */
static void test_chunking_invariance(void **state)
{
    (void)state;
    size_t gb_len, big5_len, u16_len;
    char *gb = encode_str("GB18030", SIMPLIFIED, &gb_len);
    char *big5 = encode_str("BIG5", TRADITIONAL, &big5_len);
    char *u16 = encode_str("UTF-16BE", TRADITIONAL, &u16_len);
    tbuf u16_bom = {0};
    tb_add(&u16_bom, "\xFE\xFF", 2);
    tb_add(&u16_bom, u16, u16_len);
    /* Damaged copies: a bad byte every so often. */
    tbuf gb_bad = {0}, utf8_bad = {0};
    for (size_t i = 0; i < gb_len; i++) {
        tb_add(&gb_bad, gb + i, 1);
        if (i % 97 == 0)
            tb_add(&gb_bad, "\x81\x20", 2);
    }
    for (size_t i = 0; SIMPLIFIED[i]; i++) {
        tb_add(&utf8_bad, SIMPLIFIED + i, 1);
        if (i % 89 == 0)
            tb_add(&utf8_bad, "\xE4\xB8", 2);
    }
    static const struct {
        const char *from, *to;
        unsigned flags;
        int which; /* input: 0 gb, 1 big5, 2 utf-8, 3 utf-16 with mark, 4 gb_bad, 5 utf8_bad */
    } cases[] = {
        {"GB18030", "UTF-8", 0, 0},      {"UTF-8", "GB18030", 0, 2},
        {"BIG5", "UTF-8", 0, 1},         {"UTF-8", "BIG5", FJF_LOSSY, 2},
        {"UTF-8", "UTF-8", 0, 2},        {"UTF-16", "UTF-8", 0, 3},
        {"UTF-8", "UTF-16", 0, 2},       {"GB18030", "UTF-8", FJF_LOSSY, 4},
        {"GB18030", "UTF-8", 0, 4},      {"UTF-8", "UTF-8", FJF_LOSSY, 5},
        {"UTF-8", "UTF-8", 0, 5},        {"UTF-8", "BIG5", 0, 2},
        {"UTF-8", "GB18030", FJF_LOSSY, 5},
    };
    const struct {
        const char *p;
        size_t len;
    } inputs[] = {{gb, gb_len},
                  {big5, big5_len},
                  {SIMPLIFIED, strlen(SIMPLIFIED)},
                  {u16_bom.p, u16_bom.len},
                  {gb_bad.p, gb_bad.len},
                  {utf8_bad.p, utf8_bad.len}};
    int rounds = t_quick() ? 4 : 16;
    for (size_t c = 0; c < COUNT(cases); c++) {
        const char *in = inputs[cases[c].which].p;
        size_t len = inputs[cases[c].which].len;
        recoded whole = recode(cases[c].from, cases[c].to, cases[c].flags, in, len, WHOLE);
        for (int k = 0; k <= rounds; k++) {
            uint64_t chunking = k == 0 ? BYTE_BY_BYTE : t_seed() + (uint64_t)k * 7919;
            recoded r = recode(cases[c].from, cases[c].to, cases[c].flags, in, len, chunking);
            assert_int_equal(r.rc, whole.rc);
            assert_int_equal(r.replaced, whole.replaced);
            if (whole.rc == 0)
                assert_bytes(r.out.p, r.out.len, whole.out.p, whole.out.len);
            else
                assert_int_equal(r.err.offset, whole.err.offset);
            tb_free(&r.out);
        }
        tb_free(&whole.out);
    }
    free(gb);
    free(big5);
    free(u16);
    tb_free(&u16_bom);
    tb_free(&gb_bad);
    tb_free(&utf8_bad);
}

/* ---- errors and replacements ----------------------------------------------------------- */

static void test_decode_errors(void **state)
{
    (void)state;
    recoded r = recode("GB18030", "UTF-8", 0, "ABC\x81\x20" "D", 6, WHOLE);
    assert_int_equal(r.rc, -1);
    assert_int_equal(r.err.offset, 3);
    assert_string_equal(r.err.message, "not valid GB18030 at byte 3 (0x81 0x20)");
    tb_free(&r.out);

    r = recode("UTF-8", "UTF-8", 0, "ab\xC3\x28", 4, WHOLE);
    assert_int_equal(r.rc, -1);
    assert_int_equal(r.err.offset, 2);
    assert_string_equal(r.err.message, "not valid UTF-8 at byte 2 (0xC3 0x28)");
    tb_free(&r.out);

    /* Overlong forms and surrogates are not UTF-8, on either path. */
    const char *to[] = {"UTF-8", "UTF-16LE"};
    for (size_t i = 0; i < COUNT(to); i++) {
        r = recode("UTF-8", to[i], 0, "x\xC0\xAF", 3, BYTE_BY_BYTE);
        assert_int_equal(r.rc, -1);
        assert_int_equal(r.err.offset, 1);
        tb_free(&r.out);
        r = recode("UTF-8", to[i], 0, "xy\xED\xA0\x80", 5, WHOLE);
        assert_int_equal(r.rc, -1);
        assert_int_equal(r.err.offset, 2);
        tb_free(&r.out);
    }

    /* The offset counts every byte fed, across feeds. */
    size_t len;
    char *big5 = encode_str("BIG5", TRADITIONAL, &len);
    tbuf b = {0};
    tb_add(&b, big5, len);
    tb_add(&b, "\xFF", 1); /* (glibc's BIG5 reads 0x80 as U+0080) */
    r = recode("BIG5", "UTF-8", 0, b.p, b.len, BYTE_BY_BYTE);
    assert_int_equal(r.rc, -1);
    assert_int_equal(r.err.offset, len);
    tb_free(&r.out);
    tb_free(&b);
    free(big5);
}

static void test_truncated_at_finish(void **state)
{
    (void)state;
    recoded r = recode("GB18030", "UTF-8", 0, "\xD6\xD0\x94\x39", 4, WHOLE);
    assert_int_equal(r.rc, -1);
    assert_int_equal(r.err.offset, 2);
    assert_string_equal(r.err.message, "file ends inside a character at byte 2");
    tb_free(&r.out);

    r = recode("UTF-8", "UTF-8", 0, "\xE4\xB8\xAD\xE4\xB8", 5, BYTE_BY_BYTE);
    assert_int_equal(r.rc, -1);
    assert_int_equal(r.err.offset, 3);
    tb_free(&r.out);

    /* Lossy: the lead byte is replaced, what follows it read anew. */
    r = recode("GB18030", "UTF-8", FJF_LOSSY, "\xD6\xD0\x94\x39", 4, BYTE_BY_BYTE);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.out.p, "中\xEF\xBF\xBD" "9");
    assert_int_equal(r.replaced, 1);
    tb_free(&r.out);
    r = recode("UTF-8", "UTF-8", FJF_LOSSY, "\xE4\xB8\xAD\xE4\xB8", 5, WHOLE);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.out.p, "中\xEF\xBF\xBD\xEF\xBF\xBD");
    assert_int_equal(r.replaced, 2);
    tb_free(&r.out);
    /* UTF-16: an odd byte at the end. */
    r = recode("UTF-16LE", "UTF-8", 0, "\x2D\x4E\x41", 3, WHOLE);
    assert_int_equal(r.rc, -1);
    assert_int_equal(r.err.offset, 2);
    tb_free(&r.out);
}

static void test_lossy_replacements(void **state)
{
    (void)state;
    /* Each undecodable byte becomes U+FFFD. */
    recoded r = recode("GB18030", "UTF-8", FJF_LOSSY, "A\x81\x20" "B\xFF" "C", 6, WHOLE);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.out.p, "A\xEF\xBF\xBD B\xEF\xBF\xBD" "C");
    assert_int_equal(r.replaced, 2);
    tb_free(&r.out);

    r = recode("UTF-8", "UTF-8", FJF_LOSSY, "a\xE4\xB8" "A\xC3(\xF5", 7, WHOLE);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.out.p, "a\xEF\xBF\xBD\xEF\xBF\xBD" "A\xEF\xBF\xBD(\xEF\xBF\xBD");
    assert_int_equal(r.replaced, 4);
    tb_free(&r.out);

    /* Into GB18030, U+FFFD is 84 31 A4 37. */
    r = recode("BIG5", "GB18030", FJF_LOSSY, "\xA4\xA4\xFF", 3, WHOLE);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.out.p, "\xD6\xD0\x84\x31\xA4\x37");
    assert_int_equal(r.replaced, 1);
    tb_free(&r.out);

    /* BIG5 has no U+FFFD: '?'. Simplified-only characters: '?'. */
    r = recode("GB18030", "BIG5", FJF_LOSSY, "\xD6\xD0\xFF\xD5\xE2\xB8\xF6", 7, WHOLE);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.out.p, "\xA4\xA4???");
    assert_int_equal(r.replaced, 3);
    tb_free(&r.out);

    /* UTF-16: an unpaired surrogate is one unit, two bytes. */
    r = recode("UTF-16LE", "UTF-8", FJF_LOSSY, "\x00\xD8\x41\x00", 4, WHOLE);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.out.p, "\xEF\xBF\xBD" "A");
    assert_int_equal(r.replaced, 1);
    tb_free(&r.out);
}

/* UTF-8 to UTF-8 copies without iconv; it must judge bytes as iconv does. */
static void test_utf8_copy_matches_iconv(void **state)
{
    (void)state;
    uint64_t seed = t_seed();
    tbuf messy = {0};
    static const char *const pieces[] = {"中", "a", "\xE4\xB8", "\xC0\xAF", "\xED\xA0\x80",
                                         "\xF4\x90\x80\x80", "\xF0\x9F\x98\x80", "\xEF\xBF\xBF",
                                         "\x80", "\xFF", "\xC2\xA9", "\xE0\x9F\x80"};
    for (int i = 0; i < 2000; i++)
        tb_adds(&messy, pieces[t_below(&seed, COUNT(pieces))]);
    recoded copy = recode("UTF-8", "UTF-8", FJF_LOSSY, messy.p, messy.len, WHOLE);
    recoded via16 = recode("UTF-8", "UTF-16LE", FJF_LOSSY, messy.p, messy.len, WHOLE);
    assert_int_equal(copy.rc, 0);
    assert_int_equal(via16.rc, 0);
    assert_int_equal(copy.replaced, via16.replaced);
    recoded back = recode("UTF-16LE", "UTF-8", 0, via16.out.p, via16.out.len, WHOLE);
    assert_int_equal(back.rc, 0);
    assert_bytes(copy.out.p, copy.out.len, back.out.p, back.out.len);
    tb_free(&messy);
    tb_free(&copy.out);
    tb_free(&via16.out);
    tb_free(&back.out);
}

static void test_unencodable_characters(void **state)
{
    (void)state;
    /* 这 (U+8FD9) is Simplified only: BIG5 cannot hold it. */
    const char *text = "繁體中文这";
    recoded r = recode("UTF-8", "BIG5", 0, text, strlen(text), WHOLE);
    assert_int_equal(r.rc, -1);
    assert_int_equal(r.err.offset, 12);
    assert_string_equal(r.err.message, "U+8FD9 (这) at byte 12 cannot be written in BIG5");
    tb_free(&r.out);

    /* The offset is in the input's bytes: two a character in GB18030. */
    r = recode("GB18030", "BIG5", 0, "AB\xD6\xD0\xD5\xE2", 6, BYTE_BY_BYTE);
    assert_int_equal(r.rc, -1);
    assert_int_equal(r.err.offset, 4);
    assert_non_null(strstr(r.err.message, "U+8FD9"));
    tb_free(&r.out);

    /* Far into the input, past the recoder's buffers, fed in pieces. */
    size_t prefix_len;
    char *prefix = repeat_text(TRADITIONAL, 300000, &prefix_len);
    tbuf b = {0};
    tb_add(&b, prefix, prefix_len);
    tb_adds(&b, "個这個");
    size_t gb_len;
    char *gb = encode("GB18030", b.p, b.len, &gb_len);
    const uint64_t chunkings[] = {WHOLE, t_seed()};
    for (size_t i = 0; i < COUNT(chunkings); i++) {
        r = recode("UTF-8", "BIG5", 0, b.p, b.len, chunkings[i]);
        assert_int_equal(r.rc, -1);
        assert_int_equal(r.err.offset, prefix_len + 3);
        tb_free(&r.out);
        r = recode("GB18030", "BIG5", 0, gb, gb_len, chunkings[i]);
        assert_int_equal(r.rc, -1);
        assert_int_equal(r.err.offset, gb_len - 4);
        tb_free(&r.out);
    }
    r = recode("UTF-8", "BIG5", FJF_LOSSY, b.p, b.len, WHOLE);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.replaced, 1);
    assert_memory_equal(r.out.p + r.out.len - 5, "\xAD\xD3?\xAD\xD3", 5);
    tb_free(&r.out);
    free(prefix);
    free(gb);
    tb_free(&b);
}

/* ---- byte-order marks -------------------------------------------------------------- */

static void test_output_bom(void **state)
{
    (void)state;
    const char *text = "中A";
    assert_recodes_to("UTF-8", "UTF-16", 0, text, 4, "\xFF\xFE\x2D\x4E\x41\x00", 6);
    assert_recodes_to("UTF-8", "UTF-16LE", 0, text, 4, "\x2D\x4E\x41\x00", 4);
    assert_recodes_to("UTF-8", "UTF-16LE", FJF_WRITE_BOM, text, 4, "\xFF\xFE\x2D\x4E\x41\x00",
                      6);
    assert_recodes_to("UTF-8", "UTF-16BE", 0, text, 4, "\x4E\x2D\x00\x41", 4);
    assert_recodes_to("UTF-8", "UTF-16BE", FJF_WRITE_BOM, text, 4, "\xFE\xFF\x4E\x2D\x00\x41",
                      6);
    assert_recodes_to("UTF-8", "UTF-8", FJF_WRITE_BOM, text, 4, "\xEF\xBB\xBF\xE4\xB8\xAD\x41",
                      7);
    assert_recodes_to("GB18030", "UTF-8", FJF_WRITE_BOM, "\xD6\xD0\x41", 3,
                      "\xEF\xBB\xBF\xE4\xB8\xAD\x41", 7);
    assert_recodes_to("UTF-8", "GB18030", FJF_WRITE_BOM, text, 4, "\x84\x31\x95\x33\xD6\xD0\x41",
                      7);
    /* Big5 has no mark to write. */
    assert_recodes_to("UTF-8", "BIG5", FJF_WRITE_BOM, text, 4, "\xA4\xA4\x41", 3);
    /* Empty input: the mark alone. */
    assert_recodes_to("UTF-8", "UTF-16", 0, "", 0, "\xFF\xFE", 2);
    assert_recodes_to("UTF-8", "UTF-8", 0, "", 0, "", 0);
}

static void test_utf16_input_byte_order(void **state)
{
    (void)state;
    assert_recodes_to("UTF-16", "UTF-8", 0, "\xFE\xFF\x4E\x2D\x00\x41", 6, "中A", 4);
    assert_recodes_to("UTF-16", "UTF-8", 0, "\xFF\xFE\x2D\x4E\x41\x00", 6, "中A", 4);
    /* No mark: little-endian, as Windows writes, unless it starts with NUL. */
    assert_recodes_to("UTF-16", "UTF-8", 0, "\x2D\x4E\x41\x00", 4, "中A", 4);
    assert_recodes_to("UTF-16", "UTF-8", 0, "\x00\x41\x4E\x2D", 4, "A中", 4);
    /* The mark counts in offsets. */
    recoded r = recode("UTF-16", "UTF-8", 0, "\xFF\xFE\x41\x00\x00\xDC", 6, BYTE_BY_BYTE);
    assert_int_equal(r.rc, -1);
    assert_int_equal(r.err.offset, 4);
    tb_free(&r.out);
    /* A detected UTF-16 file whose mark the caller skipped. */
    size_t len;
    char *body = encode_str("UTF-16LE", TRADITIONAL, &len);
    tbuf b = {0};
    tb_add(&b, "\xFF\xFE", 2);
    tb_add(&b, body, len);
    fjf_encoding enc = detect(b.p, b.len, 1);
    assert_recodes_to(enc.name, "UTF-8", 0, b.p + enc.bom_len, b.len - enc.bom_len, TRADITIONAL,
                      strlen(TRADITIONAL));
    free(body);
    tb_free(&b);
}

/* ---- the writer ----------------------------------------------------------------------- */

typedef struct counted_sink {
    size_t calls, largest, total;
    int fail_after; /* calls that succeed; negative: all */
} counted_sink;

static int counted_write(void *ctx, const char *data, size_t len)
{
    (void)data;
    counted_sink *s = ctx;
    if (s->fail_after >= 0 && s->calls >= (size_t)s->fail_after)
        return -1;
    s->calls++;
    s->total += len;
    if (len > s->largest)
        s->largest = len;
    return 0;
}

static void test_write_failure(void **state)
{
    (void)state;
    counted_sink sink = {.fail_after = 0};
    fjf_recoder *r;
    fjf_error err;
    assert_int_equal(fjf_recoder_new("GB18030", "UTF-8", 0, counted_write, &sink, &r, &err), 0);
    assert_int_equal(fjf_recoder_feed(r, "\xD6\xD0", 2, &err), -1);
    assert_string_equal(err.message, "write failed");
    assert_int_equal(fjf_recoder_feed(r, "\xD6\xD0", 2, &err), -1); /* stays failed */
    assert_int_equal(fjf_recoder_finish(r, &err), -1);
    fjf_recoder_free(r);

    assert_int_equal(fjf_recoder_new("UTF-8", "UTF-8", 0, counted_write, &sink, &r, &err), 0);
    assert_int_equal(fjf_recoder_feed(r, "abc", 3, &err), -1);
    assert_string_equal(err.message, "write failed");
    fjf_recoder_free(r);
}

/* Output goes out in pieces of bounded size, whatever the input's. */
static void test_bounded_buffers(void **state)
{
    (void)state;
    size_t text_len, gb_len;
    char *text = repeat_text(SIMPLIFIED, t_quick() ? 1 << 20 : 4 << 20, &text_len);
    char *gb = encode("GB18030", text, text_len, &gb_len);
    counted_sink sink = {.fail_after = -1};
    fjf_recoder *r;
    fjf_error err;
    assert_int_equal(fjf_recoder_new("GB18030", "UTF-16", 0, counted_write, &sink, &r, &err), 0);
    assert_int_equal(fjf_recoder_feed(r, gb, gb_len, &err), 0);
    assert_int_equal(fjf_recoder_finish(r, &err), 0);
    fjf_recoder_free(r);
    assert_true(sink.largest <= 64 * 1024);
    assert_true(sink.calls > 10);
    free(text);
    free(gb);
}

/* ---- threads ---------------------------------------------------------------------------- */

typedef struct job {
    const char *encoding;
    char *bytes;
    size_t len;
    int ok;
} job;

static void *run_job(void *arg)
{
    job *j = arg;
    j->ok = 1;
    for (int i = 0; i < 20 && j->ok; i++) {
        fjf_encoding enc;
        fjf_error err;
        if (fjf_encoding_detect(j->bytes, j->len, 1, &enc, &err) != 0 ||
            strcmp(enc.name, j->encoding) != 0)
            j->ok = 0;
        tbuf out = {0};
        fjf_recoder *r;
        if (fjf_recoder_new(j->encoding, "UTF-8", 0, tb_write, &out, &r, &err) != 0 ||
            fjf_recoder_feed(r, j->bytes, j->len, &err) != 0 ||
            fjf_recoder_finish(r, &err) != 0)
            j->ok = 0;
        fjf_recoder_free(r);
        const char *want = strcmp(j->encoding, "BIG5") == 0 ? TRADITIONAL : SIMPLIFIED;
        if (out.len != strlen(want) || memcmp(out.p, want, out.len) != 0)
            j->ok = 0;
        tb_free(&out);
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    job jobs[4];
    pthread_t threads[4];
    for (int i = 0; i < 4; i++) {
        jobs[i].encoding = i % 2 ? "BIG5" : "GB18030";
        jobs[i].bytes = encode_str(jobs[i].encoding, i % 2 ? TRADITIONAL : SIMPLIFIED,
                                   &jobs[i].len);
        assert_int_equal(pthread_create(&threads[i], NULL, run_job, &jobs[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(threads[i], NULL), 0);
        assert_true(jobs[i].ok);
        free(jobs[i].bytes);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_detect_empty_and_ascii),
        cmocka_unit_test(test_detect_utf8),
        cmocka_unit_test(test_detect_utf16_with_bom),
        cmocka_unit_test(test_detect_utf16_without_bom),
        cmocka_unit_test(test_detect_gb18030_bom),
        cmocka_unit_test(test_detect_chapters),
        cmocka_unit_test(test_detect_gbk_only_text),
        cmocka_unit_test(test_detect_big5_traditional),
        cmocka_unit_test(test_big5_is_the_default_for_taiwan),
        cmocka_unit_test(test_detect_big5_eten_symbols),
        cmocka_unit_test(test_detect_short_lines),
        cmocka_unit_test(test_detect_invalid_byte),
        cmocka_unit_test(test_detect_stray_bytes_are_utf8),
        cmocka_unit_test(test_detect_damage_near_start),
        cmocka_unit_test(test_detect_cut_sample),
        cmocka_unit_test(test_detect_damaged_utf8),
        cmocka_unit_test(test_detect_other_encodings),
        cmocka_unit_test(test_canonical_names),
        cmocka_unit_test(test_recoder_unknown_encoding),
        cmocka_unit_test(test_roundtrip_gb18030_text),
        cmocka_unit_test(test_roundtrip_gb18030_everything),
        cmocka_unit_test(test_roundtrip_big5),
        cmocka_unit_test(test_roundtrip_big5_hkscs),
        cmocka_unit_test(test_chunking_invariance),
        cmocka_unit_test(test_decode_errors),
        cmocka_unit_test(test_truncated_at_finish),
        cmocka_unit_test(test_lossy_replacements),
        cmocka_unit_test(test_utf8_copy_matches_iconv),
        cmocka_unit_test(test_unencodable_characters),
        cmocka_unit_test(test_output_bom),
        cmocka_unit_test(test_utf16_input_byte_order),
        cmocka_unit_test(test_write_failure),
        cmocka_unit_test(test_bounded_buffers),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests_name("encoding", tests, NULL, NULL);
}
