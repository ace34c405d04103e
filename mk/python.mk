# The Python module (python/README.md), included by the Makefile.
#   make python             $(BUILD)/python/: fanjian<ext>.so, fanjian.fjd, fanjian.pyi
#                           PYTHONPATH=build/python /usr/bin/python3 -c 'import fanjian'
#   make python-install     the package fanjian/ (the module as its __init__, the image,
#                           __main__.py, stubs) into $(PYTHON)'s virtual environment, or
#                           the user's site-packages for a Python outside one
#   make python-uninstall   removes what python-install put there
#   pip install .           the same package, built by setuptools (setup.py, pyproject.toml)
#
# The module links $(BUILD)/pic/libfanjian.a and libfanjian-formats (whose
# expat, jansson and PCRE2 it loads; libzip and uchardet on first use); the
# libraries' symbols are kept out of its dynamic symbol table.
# Debian's python3 by default (a pyenv python3 on PATH is not the system's).
PYTHON        ?= /usr/bin/python3
# Asked of the interpreter itself: a virtual environment has no python3-config.
PY_INFO       := $(shell $(PYTHON) -c 'import sysconfig as s; p = s.get_paths(); \
                   print(s.get_config_var("EXT_SUFFIX") or "", p["include"], p["platinclude"])' 2>/dev/null)
PY_EXT        := $(word 1,$(PY_INFO))
PY_INCLUDES   := $(addprefix -I,$(sort $(wordlist 2,3,$(PY_INFO))))
PY_HEADERS    := $(if $(PY_EXT),$(wildcard $(word 2,$(PY_INFO))/Python.h))
PY_DIR         = $(BUILD)/python
PY_MODULE      = $(PY_DIR)/fanjian$(PY_EXT)
PY_FILES       = $(PY_MODULE) $(PY_DIR)/fanjian.fjd $(PY_DIR)/fanjian.pyi
# The project's flags apply in full to python/fanjianmodule.c (Python 3.11's
# headers pass -Wcast-qual, -Wstrict-prototypes and the rest); only the
# library's internal symbols are hidden.
PY_CFLAGS      = $(CFLAGS) -fPIC -fvisibility=hidden $(PY_INCLUDES)

# For setup.py: what the module is built from, so the lists live here only:
# the sources of the two position-independent libraries and the generated
# sources among their objects.
PY_GEN_C       = $(patsubst $(BUILD)/pic/gen/%.o,$(BUILD)/gen/%.c,$(filter $(BUILD)/pic/gen/%,$(LIB_PIC_OBJ))) \
                 $(FMT_GEN:%=$(BUILD)/%.c)
.PHONY: python python-install python-uninstall python-sources python-gen
python-sources:
	@echo "lib $(LIB_SRC)"
	@echo "formats $(FMT_SRC)"
	@echo "cxx $(FMT_CXX)"
	@echo "gen $(PY_GEN_C)"
	@echo "libs $(FMT_LIBS) $(MARISA_LIBS)"
	@echo "dict $(DICT)"
python-gen: $(PY_GEN_C)

ifeq ($(PY_EXT),)
python python-install python-uninstall:
	@echo "make $@: $(PYTHON) does not run as Python 3 (give PYTHON=/path/to/python3)" >&2; exit 1
else ifeq ($(PY_HEADERS),)
python python-install:
	@echo "make $@: $(word 2,$(PY_INFO))/Python.h not found, which $(PYTHON) builds against: install python3-dev (scripts/install-deps.sh)" >&2; exit 1
else
python: $(PY_FILES)

# tests/suite-python.sh runs the module's tests against this build.
CHECK_DEPS += $(PY_FILES)

$(PY_DIR)/fanjianmodule.o: python/fanjianmodule.c include/fanjian.h include/fanjian-formats.h
	@mkdir -p $(dir $@)
	@echo "  CC -fPIC $<"; $(CC) $(PY_CFLAGS) -c $< -o $@

# The marisa shim linked in (formats/ocd2.c finds it there).
$(PY_MODULE): $(PY_DIR)/fanjianmodule.o $(FMT_CXX:%.cc=$(BUILD)/pic/%.o) $(FMT_PIC_LIB) \
        $(BUILD)/pic/libfanjian.a
	$(CC) $(LDFLAGS) -shared -Wl,--exclude-libs,ALL -o $@ $^ $(FMT_LIBS) $(MARISA_LIBS)

# The dictionary beside the module, where the module looks for it. Copied
# under another name first: a process may have the old one mapped.
$(PY_DIR)/fanjian.fjd: $(DICT)
	@mkdir -p $(dir $@)
	cp $< $@.tmp && mv -f $@.tmp $@

$(PY_DIR)/fanjian.pyi: python/fanjian.pyi
	@mkdir -p $(dir $@)
	cp $< $@

python-install: $(PY_FILES)
	@if grep -qa __asan_init $(PY_MODULE); then \
	    echo "python-install: $(PY_MODULE) is a sanitizer build; use BUILD=build" >&2; exit 1; fi
	@PYTHON="$(PYTHON)" EXT="$(PY_EXT)" ./python/install.sh install \
	    $(PY_MODULE) $(PY_DIR)/fanjian.fjd python/fanjian/__main__.py python/fanjian.pyi
endif

ifneq ($(PY_EXT),)
python-uninstall:
	@PYTHON="$(PYTHON)" EXT="$(PY_EXT)" ./python/install.sh uninstall
endif
