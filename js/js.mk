# The JavaScript package (js/): the core library built to WebAssembly with
# emscripten, the wrapper, and the dictionary image, packed by npm.
#   make js        $(JS_TGZ), from the package directory $(JS_PKG)
#   make bench-js  throughput in Node next to opencc-js 1.4.2 (bench/js.mjs)
EMCC     ?= emcc
JS_PKG    = $(BUILD)/js/pkg
JS_VERSION = $(shell sed -n 's/^\#define FJ_VERSION_STRING "\(.*\)"/\1/p' include/fanjian.h)
JS_TGZ    = $(BUILD)/js/fanjian-$(JS_VERSION).tgz
JS_SRC    = $(LIB_SRC) $(patsubst %.o,%.c,$(CLEAN_RULES_OBJ) $(PROFILES_OBJ)) js/glue.c
# What js/core.js calls; nothing else is kept.
JS_EXPORTS = fjjs_last_error fjjs_alloc fjjs_release fjjs_dict_open fjjs_converter_open fjjs_convert \
             fjjs_detect fjjs_clean_close fjjs_utf16 fjjs_heap_used fj_free fj_converter_close fj_dict_close fj_version fj_dict_profile_count \
             fj_dict_profile_name fj_target_name
# -msse2 -msimd128: the library's SSE2 paths as WebAssembly SIMD (Node 16.4+,
# current browsers).
JS_OPT   ?= -O2 -msimd128 -msse2
JS_CFLAGS = -std=c11 -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L $(JS_OPT) $(WARN) -Iinclude -Isrc
# A standalone module with no runtime glue: its one import is in js/core.js.
JS_LDFLAGS = --no-entry -sSTANDALONE_WASM -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=33554432 \
             -sEXPORTED_FUNCTIONS=$(subst $(JS_SPACE),$(JS_COMMA),$(JS_EXPORTS:%=_%))
JS_COMMA := ,
JS_SPACE := $(subst ,, )

.PHONY: js bench-js
js: $(JS_TGZ)

$(JS_PKG)/fanjian.wasm: $(JS_SRC) include/fanjian.h $(wildcard src/*.h) js/js.mk
	@mkdir -p $(dir $@)
	@echo "  EMCC $@"; $(EMCC) $(JS_CFLAGS) $(JS_SRC) -o $@ $(JS_LDFLAGS)

$(JS_PKG)/core.cjs: js/core.js
	@mkdir -p $(dir $@)
	@{ cat $<; echo 'module.exports = createFanjian;'; } > $@
$(JS_PKG)/core.mjs: js/core.js
	@mkdir -p $(dir $@)
	@{ cat $<; echo 'export default createFanjian;'; } > $@
$(JS_PKG)/package.json: js/package.json include/fanjian.h
	@mkdir -p $(dir $@)
	@sed 's/@VERSION@/$(JS_VERSION)/' $< > $@
$(JS_PKG)/%: js/%
	@mkdir -p $(dir $@)
	@cp $< $@
$(JS_PKG)/fanjian.fjd: $(DICT)
	@mkdir -p $(dir $@)
	@cp $< $@

JS_FILES = $(addprefix $(JS_PKG)/,package.json index.js index.mjs browser.mjs core.cjs core.mjs README.md \
                                   fanjian.wasm fanjian.fjd)
$(JS_TGZ): $(JS_FILES)
	@rm -f $(BUILD)/js/fanjian-*.tgz
	cd $(JS_PKG) && npm pack --silent --pack-destination $(abspath $(BUILD)/js) >/dev/null
	@ls -l $@

# make check tests the package (tests/suite-js.sh) where emscripten is installed.
ifneq ($(shell command -v $(EMCC) 2>/dev/null),)
CHECK_DEPS += js
endif

# opencc-js 1.4.2 from the npm registry (npm pack), its published integrity
# checked, cached beside OpenCC's tarball; unpacked into the build tree.
OPENCC_JS_VERSION   = 1.4.2
OPENCC_JS_INTEGRITY = sha512-EdcspgdROiCCZDM+jZR6Pa670xW+EW2QhctPBQ8gRjg6lrx4IHEl+2s+kt5izk/TkxVRgdWuFgaGkaEdIUfdaw==
OPENCC_JS_DIR       = $(BUILD)/bench-js/opencc-js-$(OPENCC_JS_VERSION)
FANJIAN_CACHE      ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/fanjian
$(OPENCC_JS_DIR)/package.json:
	@mkdir -p $(FANJIAN_CACHE) $(OPENCC_JS_DIR)
	@tgz=$(FANJIAN_CACHE)/opencc-js-$(OPENCC_JS_VERSION).tgz; \
	want=$$(printf '%s' '$(OPENCC_JS_INTEGRITY:sha512-%=%)' | base64 -d | od -An -v -tx1 | tr -d ' \n'); \
	ok() { [ -f "$$1" ] && [ "$$(sha512sum "$$1" | cut -d' ' -f1)" = "$$want" ]; }; \
	if ! ok "$$tgz"; then \
	    (cd $(FANJIAN_CACHE) && npm pack --silent opencc-js@$(OPENCC_JS_VERSION) >/dev/null) && \
	    ok "$$tgz" || { echo "bench-js: opencc-js-$(OPENCC_JS_VERSION).tgz does not match its published integrity" >&2; exit 1; }; \
	fi; \
	tar -xzf "$$tgz" -C $(OPENCC_JS_DIR) --strip-components=1

# JS_BENCH_TEXT: another text (default: ../shared/opencc/compat/input.txt, repeated to 4 MiB).
bench-js: $(JS_TGZ) $(OPENCC_JS_DIR)/package.json
	node bench/js.mjs $(JS_PKG) $(OPENCC_JS_DIR) $(JS_BENCH_TEXT)

# js/glue.c natively, with the library's flags (ASan and UBSan under make
# check-sanitize), driven by js/glue-check.c (tests/suite-js.sh). glibc
# deprecates mallinfo, which emscripten's malloc offers and the module uses.
$(BUILD)/js/glue.o: CFLAGS += -Wno-deprecated-declarations
$(BUILD)/js/glue-check: $(BUILD)/js/glue-check.o $(BUILD)/js/glue.o $(BUILD)/libfanjian.a
	$(CC) $(LDFLAGS) -o $@ $^
CHECK_DEPS += $(BUILD)/js/glue-check
