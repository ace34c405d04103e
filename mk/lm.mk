# The language model's tests (tests/suite-lm.sh) read the model itself.
CHECK_DEPS += $(LM)
