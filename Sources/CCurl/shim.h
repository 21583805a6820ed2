#include <curl/curl.h>

/// CURLVERSION_NOW is a macro Swift cannot import; this names the current struct version.
static inline curl_version_info_data *CCurl_versionInfo(void) {
    return curl_version_info(CURLVERSION_NOW);
}

/// CURL_GLOBAL_DEFAULT is a macro built from other macros; Swift cannot import it.
static inline CURLcode CCurl_globalInit(void) {
    return curl_global_init(CURL_GLOBAL_DEFAULT);
}

/// CURL_ERROR_SIZE as a function: the size CURLOPT_ERRORBUFFER's buffer must have.
static inline size_t CCurl_errorBufferSize(void) {
    return CURL_ERROR_SIZE;
}

// curl_easy_setopt is variadic, which Swift cannot call; one typed setter per argument
// type the option table uses (long, string, data pointer, list, callbacks).

/// curl_easy_setopt for CURLOPTTYPE_LONG options (flags, counts, timeouts).
static inline CURLcode CCurl_setLong(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt for string options; libcurl copies the string, NULL resets it.
static inline CURLcode CCurl_setString(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt for data pointers (callback user data, CURLOPT_ERRORBUFFER).
static inline CURLcode CCurl_setPointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt for curl_slist options (CURLOPT_HTTPHEADER).
static inline CURLcode CCurl_setList(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt for CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION (same signature).
static inline CURLcode CCurl_setWriteFunction(CURL *handle, CURLoption option, curl_write_callback value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt for CURLOPT_XFERINFOFUNCTION.
static inline CURLcode CCurl_setXferInfoFunction(CURL *handle, curl_xferinfo_callback value) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}

// curl_easy_getinfo is variadic too; one typed getter per result type.

/// curl_easy_getinfo for CURLINFO_LONG values (response code, redirect count).
static inline CURLcode CCurl_getLong(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

/// curl_easy_getinfo for CURLINFO_OFF_T values (sizes, *_T times).
static inline CURLcode CCurl_getOffset(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

/// curl_easy_getinfo for CURLINFO_STRING values (effective URL); libcurl owns the string.
static inline CURLcode CCurl_getString(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}
