#include <curl/curl.h>

/// CURLVERSION_NOW is a macro Swift cannot import; this names the current struct version.
static inline curl_version_info_data *CCurl_versionInfo(void) {
    return curl_version_info(CURLVERSION_NOW);
}
