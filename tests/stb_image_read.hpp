// stb_image (Debian's libstb-dev) for the tests that decode the PNGs the views write: the
// implementation is compiled into the one test file that includes this header, with the
// warnings that stb's code gives under -Wall -Wextra silenced for it alone.
#pragma once

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-function"
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#include <stb/stb_image.h>
#pragma GCC diagnostic pop
