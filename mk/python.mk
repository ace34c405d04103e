# The Python module (python/README.md), included by the Makefile.
#   make python           $(BUILD)/python/: fanjian<ext>.so, fanjian.fjd, fanjian.pyi
#                         PYTHONPATH=build/python /usr/bin/python3 -c 'import fanjian'
#   make python-install   the same three files into the user's site-packages
#
# The module links $(BUILD)/pic/libfanjian.a and libfanjian-formats (whose
# expat, jansson and PCRE2 it loads; libzip and uchardet on first use); the
# libraries' symbols are kept out of its dynamic symbol table.
# Debian's python3 by default (a pyenv python3 on PATH is not the system's).
PYTHON        ?= /usr/bin/python3
PYTHON_CONFIG ?= $(PYTHON)-config
PY_INCLUDES   := $(shell $(PYTHON_CONFIG) --includes 2>/dev/null)
PY_EXT        := $(shell $(PYTHON_CONFIG) --extension-suffix 2>/dev/null)
PY_DIR         = $(BUILD)/python
PY_MODULE      = $(PY_DIR)/fanjian$(PY_EXT)
PY_FILES       = $(PY_MODULE) $(PY_DIR)/fanjian.fjd $(PY_DIR)/fanjian.pyi
# The project's flags apply in full to python/fanjianmodule.c (Python 3.11's
# headers pass -Wcast-qual, -Wstrict-prototypes and the rest); only the
# library's internal symbols are hidden.
PY_CFLAGS      = $(CFLAGS) -fPIC -fvisibility=hidden $(PY_INCLUDES)

.PHONY: python python-install
ifeq ($(PY_EXT),)
python python-install:
	@echo "make python: $(PYTHON_CONFIG) not found: install python3-dev (scripts/install-deps.sh)" >&2; exit 1
else
python: $(PY_FILES)

# tests/suite-python.sh runs the module's tests against this build.
CHECK_DEPS += $(PY_FILES)

$(PY_DIR)/fanjianmodule.o: python/fanjianmodule.c include/fanjian.h include/fanjian-formats.h
	@mkdir -p $(dir $@)
	@echo "  CC -fPIC $<"; $(CC) $(PY_CFLAGS) -c $< -o $@

$(PY_MODULE): $(PY_DIR)/fanjianmodule.o $(FMT_PIC_LIB) $(BUILD)/pic/libfanjian.a
	$(CC) $(LDFLAGS) -shared -Wl,--exclude-libs,ALL -o $@ $^ $(FMT_LIBS)

# The dictionary beside the module, where the module looks for it. Copied
# under another name first: a process may have the old one mapped.
$(PY_DIR)/fanjian.fjd: $(DICT)
	@mkdir -p $(dir $@)
	cp $< $@.tmp && mv -f $@.tmp $@

$(PY_DIR)/fanjian.pyi: python/fanjian.pyi
	@mkdir -p $(dir $@)
	cp $< $@

PY_USER_SITE = $(shell $(PYTHON) -m site --user-site)
python-install: $(PY_FILES)
	@if grep -qa __asan_init $(PY_MODULE); then \
	    echo "python-install: $(PY_MODULE) is a sanitizer build; use BUILD=build" >&2; exit 1; fi
	install -d "$(PY_USER_SITE)"
	@# Beside, then renamed: a running process may have the old files mapped.
	@set -e; for f in $(PY_FILES); do \
	    case $$f in *.so) m=755 ;; *) m=644 ;; esac; \
	    t="$(PY_USER_SITE)/$$(basename $$f)"; \
	    echo "install -m $$m $$f $$t"; install -m $$m $$f "$$t.tmp"; mv -f "$$t.tmp" "$$t"; done
	@echo "installed: $(PYTHON) -c 'import fanjian' (from $(PY_USER_SITE))"
endif
