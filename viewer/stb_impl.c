/* stb_image_write (public domain, libstb-dev) compiled once, without the project's warnings. */
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>
