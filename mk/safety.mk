# tests/suite-safety.sh: the CLI's file safety. Its LD_PRELOAD shim swaps a
# file for a symbolic link mid-run; it is a test tool, never part of fanjian,
# and is built without the sanitizers (it is loaded before their runtime).
SWAP_PRELOAD = $(BUILD)/tests/swap-preload.so

$(SWAP_PRELOAD): tests/swap-preload.c
	@mkdir -p $(dir $@)
	@echo "  CC -shared $<"; $(CC) -std=c11 -O2 $(WARN) -fPIC -shared -o $@ $< -ldl

CHECK_DEPS += $(SWAP_PRELOAD)

# formats/display.c (file names made safe for messages), tested on its own.
$(BUILD)/tests/display: $(BUILD)/tests/display.o $(BUILD)/formats/display.o
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka

CHECK_DEPS += $(BUILD)/tests/display
