# fanjian serve: the web page (cli/web/index.html), compiled into the CLI as
# a byte array, as data/clean-rules.txt is into the library.
WEB_INDEX_OBJ = $(BUILD)/gen/web_index.o

$(BUILD)/gen/web_index.c: cli/web/index.html scripts/embed.sh
	@mkdir -p $(dir $@)
	@./scripts/embed.sh fjx_web_index_html $< > $@.tmp && mv $@.tmp $@

$(WEB_INDEX_OBJ): $(BUILD)/gen/web_index.c
	@echo "  CC $<"; $(CC) $(CFLAGS) -c $< -o $@
