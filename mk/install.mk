# ---- shared libraries, the OpenCC-compatible C API, install (mk/install.mk) ----
#   make shared       $(BUILD)/libfanjian.so.VERSION (+ .so.MAJOR, .so links) and
#                     $(BUILD)/compat/libopencc.so.1.1 (+ libopencc.so)
#   make install      PREFIX=/usr/local DESTDIR= ; BINDIR LIBDIR INCLUDEDIR DATADIR
#                     MANDIR PKGCONFIGDIR default from PREFIX
#   make uninstall    the same variables
#   make DEFAULT_DICT=/usr/share/fanjian/fanjian.fjd
#                     compiles that path into the library as its default dictionary
#                     (fj_dict_default_path()); only src/image.c is rebuilt
#
# Where the installed programs find the dictionary, under any PREFIX, with no
# rebuild: the CLI tries ../share/fanjian/fanjian.fjd from its own executable;
# libopencc tries ../../share/fanjian/fanjian.fjd from its own file. Programs
# linking libfanjian pass a path (pkg-config --variable=dictfile fanjian) or
# set $FANJIAN_DICT, unless the library's default was built to match.

FJ_VERSION := $(shell sed -n 's/^.define FJ_VERSION_STRING "\(.*\)"/\1/p' include/fanjian.h)
FJ_SOMAJOR := $(firstword $(subst ., ,$(FJ_VERSION)))

PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
DATADIR      ?= $(PREFIX)/share
MANDIR       ?= $(DATADIR)/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DESTDIR      ?=
INSTALL      ?= install

# -z defs: every symbol the library uses must come from what it is linked with.
SO_LDFLAGS = -shared -Wl,-z,defs -Wl,-z,relro -Wl,-z,now

# -- libfanjian.so: the PIC objects, exporting exactly fanjian.h's functions --
SO_REAL  = $(BUILD)/libfanjian.so.$(FJ_VERSION)
SO_MAJOR = $(BUILD)/libfanjian.so.$(FJ_SOMAJOR)
SO_DEV   = $(BUILD)/libfanjian.so

$(SO_REAL): $(LIB_PIC_OBJ) src/libfanjian.map
	@echo "  LD $@"; $(CC) $(LDFLAGS) $(SO_LDFLAGS) -Wl,-soname,libfanjian.so.$(FJ_SOMAJOR) \
	    -Wl,--version-script=src/libfanjian.map -o $@ $(LIB_PIC_OBJ)
$(SO_MAJOR): $(SO_REAL)
	ln -sf $(notdir $<) $@
$(SO_DEV): $(SO_MAJOR)
	ln -sf $(notdir $<) $@

# -- the ABI baseline that tests/suite-abi.sh compares libfanjian.so with ------
# (Debian's abigail-tools). After a deliberate change of the ABI:
#   make abi-baseline    rewrites abi/libfanjian.abi from the built library
ABIDW = abidw --headers-dir include --drop-private-types --no-corpus-path --no-show-locs \
        --drop-undefined-syms
.PHONY: abi-baseline
abi-baseline: $(SO_REAL)
	@mkdir -p abi
	$(ABIDW) $(SO_REAL) | sed "s| comp-dir-path='[^']*'||" > abi/libfanjian.abi.tmp
	mv abi/libfanjian.abi.tmp abi/libfanjian.abi

# -- libopencc.so.1.1: OpenCC's C API (compat/opencc.h), self-contained --------
COMPAT_OBJ  = $(BUILD)/pic/compat/opencc.o
COMPAT_SO   = $(BUILD)/compat/libopencc.so.1.1
COMPAT_DEV  = $(BUILD)/compat/libopencc.so

# Compiled by the Makefile's $(BUILD)/pic/%.o rule; the header is ours.
$(COMPAT_OBJ): compat/opencc.h
$(COMPAT_SO): $(COMPAT_OBJ) $(BUILD)/pic/libfanjian.a compat/libopencc.map
	@mkdir -p $(dir $@)
	@echo "  LD $@"; $(CC) $(LDFLAGS) $(SO_LDFLAGS) -Wl,-soname,libopencc.so.1.1 \
	    -Wl,--version-script=compat/libopencc.map -o $@ $(COMPAT_OBJ) \
	    $(BUILD)/pic/libfanjian.a -lpthread -ldl
$(COMPAT_DEV): $(COMPAT_SO)
	ln -sf $(notdir $<) $@

.PHONY: shared
shared: $(SO_DEV) $(COMPAT_DEV)

# -- the library's default dictionary path (optional) --------------------------
# $(DEFAULT_DICT_STAMP) holds the DEFAULT_DICT the objects were built with; it
# changes (and src/image.c is recompiled) only when that value changes. A new
# stamp for the source's own default is dated 1970, so it rebuilds nothing.
DEFAULT_DICT ?=
DEFAULT_DICT_STAMP = $(BUILD)/gen/default-dict
$(DEFAULT_DICT_STAMP): fj-install-force
	@mkdir -p $(dir $@)
	@if [ ! -e $@ ] && [ -z '$(DEFAULT_DICT)' ]; then \
	    : > $@ && touch -d @0 $@; \
	elif [ "$$(cat $@)" != '$(DEFAULT_DICT)' ]; then \
	    printf '%s' '$(DEFAULT_DICT)' > $@; \
	fi
$(BUILD)/src/image.o $(BUILD)/pic/src/image.o: $(DEFAULT_DICT_STAMP)
ifneq ($(DEFAULT_DICT),)
$(BUILD)/src/image.o $(BUILD)/pic/src/image.o: CFLAGS += -DFJ_DEFAULT_DICT='"$(DEFAULT_DICT)"'
endif

# -- test programs (tests/suite-install.sh) --------------------------------------
# Written only to OpenCC's API: the shim's header and library, found by -I/-L
# as a real OpenCC would be.
$(BUILD)/tests/opencc_consumer $(BUILD)/tests/opencc_errors: $(BUILD)/tests/%: \
        tests/%.c compat/opencc.h $(COMPAT_DEV)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Icompat -o $@ $< $(LDFLAGS) -L$(BUILD)/compat \
	    -Wl,-rpath,'$$ORIGIN/../compat' -lopencc -lpthread

# The compiler and sanitizer flags of this build, for the programs the suite
# compiles against the staged install (rewritten only when they change).
$(BUILD)/tests/install-flags: fj-install-force
	@mkdir -p $(dir $@)
	@printf "TEST_CC='%s'\nTEST_SAN='%s'\n" '$(CC)' '$(SAN)' > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

CHECK_DEPS += $(SO_DEV) $(COMPAT_DEV) $(BUILD)/tests/opencc_consumer \
              $(BUILD)/tests/opencc_errors $(BUILD)/tests/install-flags

.PHONY: fj-install-force
fj-install-force:

# -- install / uninstall ---------------------------------------------------------
# What `make install` copies from the build: tests/suite-install.sh passes
# each to `make -o` so that installing never rebuilds anything.
INSTALL_ARTEFACTS = $(BUILD)/fanjian $(BUILD)/libfanjian.a $(FMT_LIB) $(SO_REAL) $(DICT) $(COMPAT_SO) \
                    $(MARISA_SHIM)

IDEST = $(DESTDIR)
# A directory below PREFIX as ${prefix}/..., for the .pc files.
pc_dir = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))
pc_subst = sed -e 's|@prefix@|$(PREFIX)|' -e 's|@libdir@|$(call pc_dir,$(LIBDIR))|' \
               -e 's|@includedir@|$(call pc_dir,$(INCLUDEDIR))|' \
               -e 's|@datadir@|$(call pc_dir,$(DATADIR))|'

.PHONY: install uninstall print-install-artefacts
print-install-artefacts:
	@echo $(INSTALL_ARTEFACTS)

install: $(INSTALL_ARTEFACTS)
	$(INSTALL) -d "$(IDEST)$(BINDIR)" "$(IDEST)$(LIBDIR)" "$(IDEST)$(INCLUDEDIR)" \
	    "$(IDEST)$(DATADIR)/fanjian" "$(IDEST)$(MANDIR)/man1" "$(IDEST)$(MANDIR)/man3" \
	    "$(IDEST)$(PKGCONFIGDIR)" "$(IDEST)$(LIBDIR)/fanjian-opencc/pkgconfig" \
	    "$(IDEST)$(INCLUDEDIR)/fanjian-opencc/opencc"
	$(INSTALL) -m 0755 $(BUILD)/fanjian "$(IDEST)$(BINDIR)/fanjian"
	$(INSTALL) -m 0644 $(BUILD)/libfanjian.a "$(IDEST)$(LIBDIR)/libfanjian.a"
	$(INSTALL) -m 0755 $(SO_REAL) "$(IDEST)$(LIBDIR)/$(notdir $(SO_REAL))"
	ln -sf $(notdir $(SO_REAL)) "$(IDEST)$(LIBDIR)/$(notdir $(SO_MAJOR))"
	ln -sf $(notdir $(SO_MAJOR)) "$(IDEST)$(LIBDIR)/libfanjian.so"
	$(INSTALL) -m 0644 include/fanjian.h "$(IDEST)$(INCLUDEDIR)/fanjian.h"
	$(INSTALL) -m 0644 $(FMT_LIB) "$(IDEST)$(LIBDIR)/libfanjian-formats.a"
	$(INSTALL) -m 0755 $(MARISA_SHIM) "$(IDEST)$(LIBDIR)/$(notdir $(MARISA_SHIM))"
	$(INSTALL) -m 0644 include/fanjian-formats.h "$(IDEST)$(INCLUDEDIR)/fanjian-formats.h"
	$(INSTALL) -m 0644 $(DICT) "$(IDEST)$(DATADIR)/fanjian/fanjian.fjd"
	@# The JavaScript package, when built (make js), for serve's page: its
	@# image is the one installed beside it.
	@if [ -r $(JS_PKG)/browser.mjs ]; then \
	    echo "install the JavaScript package into $(DATADIR)/fanjian/js"; \
	    $(INSTALL) -d "$(IDEST)$(DATADIR)/fanjian/js" && \
	    for f in browser.mjs core.mjs fanjian.wasm; do \
	        $(INSTALL) -m 0644 $(JS_PKG)/$$f "$(IDEST)$(DATADIR)/fanjian/js/$$f" || exit 1; \
	    done && ln -sf ../fanjian.fjd "$(IDEST)$(DATADIR)/fanjian/js/fanjian.fjd"; \
	fi
	$(INSTALL) -m 0644 man/fanjian.1 "$(IDEST)$(MANDIR)/man1/fanjian.1"
	$(INSTALL) -m 0644 man/fanjian.3 "$(IDEST)$(MANDIR)/man3/fanjian.3"
	$(pc_subst) -e 's|@VERSION@|$(FJ_VERSION)|' fanjian.pc.in > "$(IDEST)$(PKGCONFIGDIR)/fanjian.pc"
	$(INSTALL) -m 0755 $(COMPAT_SO) "$(IDEST)$(LIBDIR)/fanjian-opencc/libopencc.so.1.1"
	ln -sf libopencc.so.1.1 "$(IDEST)$(LIBDIR)/fanjian-opencc/libopencc.so"
	$(INSTALL) -m 0644 compat/opencc.h "$(IDEST)$(INCLUDEDIR)/fanjian-opencc/opencc.h"
	ln -sf ../opencc.h "$(IDEST)$(INCLUDEDIR)/fanjian-opencc/opencc/opencc.h"
	$(pc_subst) -e 's|@VERSION@|$(FJ_VERSION)|' -e 's|@name@|fanjian-opencc|' \
	    compat/fanjian-opencc.pc.in > "$(IDEST)$(PKGCONFIGDIR)/fanjian-opencc.pc"
	$(pc_subst) -e 's|@VERSION@|1.4.2|' -e 's|@name@|opencc|' \
	    compat/fanjian-opencc.pc.in > "$(IDEST)$(LIBDIR)/fanjian-opencc/pkgconfig/opencc.pc"
	chmod 0644 "$(IDEST)$(PKGCONFIGDIR)/fanjian.pc" "$(IDEST)$(PKGCONFIGDIR)/fanjian-opencc.pc" \
	    "$(IDEST)$(LIBDIR)/fanjian-opencc/pkgconfig/opencc.pc"
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then \
	    ldconfig; fi

uninstall:
	rm -f "$(IDEST)$(BINDIR)/fanjian" "$(IDEST)$(LIBDIR)/libfanjian.a" \
	    "$(IDEST)$(LIBDIR)/$(notdir $(SO_REAL))" "$(IDEST)$(LIBDIR)/$(notdir $(SO_MAJOR))" \
	    "$(IDEST)$(LIBDIR)/libfanjian.so" "$(IDEST)$(INCLUDEDIR)/fanjian.h" \
	    "$(IDEST)$(LIBDIR)/libfanjian-formats.a" "$(IDEST)$(INCLUDEDIR)/fanjian-formats.h" \
	    "$(IDEST)$(LIBDIR)/$(notdir $(MARISA_SHIM))" \
	    "$(IDEST)$(DATADIR)/fanjian/js/browser.mjs" "$(IDEST)$(DATADIR)/fanjian/js/core.mjs" \
	    "$(IDEST)$(DATADIR)/fanjian/js/fanjian.wasm" "$(IDEST)$(DATADIR)/fanjian/js/fanjian.fjd" \
	    "$(IDEST)$(DATADIR)/fanjian/fanjian.fjd" "$(IDEST)$(MANDIR)/man1/fanjian.1" \
	    "$(IDEST)$(MANDIR)/man3/fanjian.3" "$(IDEST)$(PKGCONFIGDIR)/fanjian.pc" \
	    "$(IDEST)$(PKGCONFIGDIR)/fanjian-opencc.pc" \
	    "$(IDEST)$(LIBDIR)/fanjian-opencc/libopencc.so.1.1" "$(IDEST)$(LIBDIR)/fanjian-opencc/libopencc.so" \
	    "$(IDEST)$(LIBDIR)/fanjian-opencc/pkgconfig/opencc.pc" \
	    "$(IDEST)$(INCLUDEDIR)/fanjian-opencc/opencc.h" "$(IDEST)$(INCLUDEDIR)/fanjian-opencc/opencc/opencc.h"
	-rmdir "$(IDEST)$(DATADIR)/fanjian/js" "$(IDEST)$(DATADIR)/fanjian" "$(IDEST)$(LIBDIR)/fanjian-opencc/pkgconfig" \
	    "$(IDEST)$(LIBDIR)/fanjian-opencc" "$(IDEST)$(INCLUDEDIR)/fanjian-opencc/opencc" \
	    "$(IDEST)$(INCLUDEDIR)/fanjian-opencc" 2>/dev/null || true
