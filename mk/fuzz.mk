# Fuzz targets (fuzz/*.c; fuzz/fuzz.h says how they work).
#   make fuzz        libFuzzer builds in build-fuzz/ (clang), seeds made
#   make fuzz-run    each target for FUZZ_SECONDS (default 60) on its corpus
#   make fuzz-long   each target for an hour or 10 million executions,
#                    whichever comes first (FUZZ_LONG_SECONDS, FUZZ_LONG_RUNS)
# `make check` builds each target without libFuzzer and runs it over its
# seeds (tests/suite-fuzz.sh), and, where clang is present, runs each
# libFuzzer build briefly.
FUZZ_TARGETS = convert stream image encoding markup epub api
FUZZ_BUILD   = build-fuzz
FUZZ_COMMON  = fuzz/common.c
FUZZ_SEEDS   = $(BUILD)/fuzz/seeds
FUZZ_SAN     = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# The server's JSON API (serve_api.o) and libfanjian-formats, without the
# CLI's own plumbing and the server's HTTP side.
FUZZ_CLI_OBJ = $(BUILD)/cli/serve_api.o $(FMT_LIB)

# Without libFuzzer: the current build's compiler and sanitizers.
FUZZ_STANDALONE = $(FUZZ_TARGETS:%=$(BUILD)/fuzz/standalone-%)
$(BUILD)/fuzz/standalone-%: fuzz/%.c $(FUZZ_COMMON) fuzz/standalone.c fuzz/fuzz.h \
        $(FUZZ_CLI_OBJ) $(BUILD)/libfanjian.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ fuzz/$*.c $(FUZZ_COMMON) fuzz/standalone.c \
	    $(FUZZ_CLI_OBJ) $(BUILD)/libfanjian.a $(FMT_LIBS) -lm

$(BUILD)/fuzz/seeds/.made: fuzz/seeds.sh $(BUILD)/fjdict $(DATA)/.fetched $(ESSAY) \
        $(wildcard tests/cases/*.tsv) $(wildcard data/context/*.tsv)
	./fuzz/seeds.sh $(BUILD)/fuzz $(BUILD)/fjdict $(DATA) $(ESSAY)
	@touch $@

CHECK_DEPS += $(FUZZ_STANDALONE) $(BUILD)/fuzz/seeds/.made

# With libFuzzer: the library and the CLI's file code rebuilt by clang.
.PHONY: fuzz fuzz-run fuzz-long
FUZZ_BINS = $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz-%)
fuzz: $(BUILD)/fuzz/seeds/.made
	$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=clang OPT=-O1 DATA=$(DATA) \
	    SAN="-fsanitize=fuzzer-no-link $(FUZZ_SAN)" fuzz-bins

fuzz-bins: $(FUZZ_BINS)
$(FUZZ_BUILD)/fuzz-%: fuzz/%.c $(FUZZ_COMMON) fuzz/fuzz.h $(FUZZ_CLI_OBJ) \
        $(BUILD)/libfanjian.a
	$(CC) $(CFLAGS) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ fuzz/$*.c $(FUZZ_COMMON) \
	    $(FUZZ_CLI_OBJ) $(BUILD)/libfanjian.a $(FMT_LIBS) -lm

FUZZ_SECONDS      ?= 60
FUZZ_LONG_SECONDS ?= 3600
FUZZ_LONG_RUNS    ?= 10000000
fuzz-run: fuzz
	FUZZ_SECONDS=$(FUZZ_SECONDS) ./fuzz/run.sh $(FUZZ_BUILD) $(BUILD)/fuzz $(FUZZ_TARGETS)
fuzz-long: fuzz
	FUZZ_SECONDS=$(FUZZ_LONG_SECONDS) FUZZ_RUNS=$(FUZZ_LONG_RUNS) \
	    ./fuzz/run.sh $(FUZZ_BUILD) $(BUILD)/fuzz $(FUZZ_TARGETS)

# The engine against the reference converter on every line of a large
# text (default: the benchmark corpus, 1.2 million lines), all 16 profiles.
.PHONY: difftest
DIFFTEST_TEXT ?= $(BUILD)/bench-cache/corpus.txt
$(BUILD)/tests/difftest: $(BUILD)/tests/difftest.o $(BUILD)/formats/ocdata.o $(BUILD)/libfanjian.a
	$(CC) $(LDFLAGS) -o $@ $^ -ljansson -lm
difftest: all $(BUILD)/tests/difftest
	@[ -r $(DIFFTEST_TEXT) ] || { echo "difftest: $(DIFFTEST_TEXT) missing: run make bench once, or set DIFFTEST_TEXT" >&2; exit 2; }
	$(BUILD)/tests/difftest $(DICT) $(DATA) $(DIFFTEST_TEXT)

# `make check` (plain run only) also builds the libFuzzer targets when clang
# is installed; tests/suite-fuzz.sh runs them briefly.
ifeq ($(BUILD),build)
ifneq ($(shell command -v clang 2>/dev/null),)
CHECK_DEPS += fuzz
endif
endif
