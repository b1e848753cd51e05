/* image_version — ubikit_version(): the library's version at run time
 * (include/ubikit/version.h; the image layer is the library's top). */
#include <ubikit/version.h>

const char *ubikit_version(void)
{
	return UBIKIT_VERSION_STRING;
}
