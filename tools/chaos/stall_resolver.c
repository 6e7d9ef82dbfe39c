/* LD_PRELOAD shim for the chaos suite's resolver stall (tools/chaos/resolver_shim.py builds
 * it with cc into build/chaos/).
 *
 * getaddrinfo() of CHAOS_RESOLVER_HOST answers CHAOS_RESOLVER_ADDR (the name is in no DNS),
 * except while the file CHAOS_RESOLVER_SILENT exists: then the lookup never answers, it
 * blocks until the file is gone and fails with EAI_AGAIN, as a resolver whose server is
 * silent. Every lookup of the host is appended to CHAOS_RESOLVER_LOG as
 * "<epoch seconds> <pid> silent|answered".
 *
 * libcurl caches a name for 60 s and reuses connections, so a short stall would never see a
 * lookup. For transfers to that host only, curl_easy_setopt(CURLOPT_URL) also sets what a
 * lapsed DNS TTL and a server that closes its connections amount to: no cache, a fresh
 * connection per transfer. Other URLs get curl's defaults back (handles are reused). */
#define _GNU_SOURCE
#define CURL_DISABLE_TYPECHECK /* the macro would rename the definition below */
#include <curl/curl.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <unistd.h>

typedef int (*getaddrinfo_fn)(const char*, const char*, const struct addrinfo*, struct addrinfo**);
typedef CURLcode (*setopt_fn)(CURL*, CURLoption, ...);

static int is_stalled_host(const char* name) {
  const char* host = getenv("CHAOS_RESOLVER_HOST");
  return name != NULL && host != NULL && *host != '\0' && strcasecmp(name, host) == 0;
}

static void log_lookup(const char* what) {
  const char* path = getenv("CHAOS_RESOLVER_LOG");
  if (path == NULL) return;
  struct timeval now;
  gettimeofday(&now, NULL);
  char line[96];
  int n = snprintf(line, sizeof line, "%ld.%03ld %d %s\n", (long)now.tv_sec,
                   (long)(now.tv_usec / 1000), (int)getpid(), what);
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  if (write(fd, line, (size_t)n) < 0) { /* the log is evidence, not a reason to fail */
  }
  close(fd);
}

static int silent(void) {
  const char* flag = getenv("CHAOS_RESOLVER_SILENT");
  return flag != NULL && access(flag, F_OK) == 0;
}

int getaddrinfo(const char* node, const char* service, const struct addrinfo* hints,
                struct addrinfo** res) {
  static getaddrinfo_fn real;
  if (real == NULL) real = (getaddrinfo_fn)dlsym(RTLD_NEXT, "getaddrinfo");
  if (!is_stalled_host(node)) return real(node, service, hints, res);
  if (silent()) {
    log_lookup("silent");
    while (silent()) usleep(50 * 1000);
    return EAI_AGAIN;
  }
  log_lookup("answered");
  const char* addr = getenv("CHAOS_RESOLVER_ADDR");
  return real(addr != NULL ? addr : "127.0.0.1", service, hints, res);
}

/* The URL's host is between "://" (after any userinfo) and the next ':', '/' or end. */
static int url_has_stalled_host(const char* url) {
  const char* start = url != NULL ? strstr(url, "://") : NULL;
  if (start == NULL) return 0;
  start += 3;
  size_t len = strcspn(start, ":/?#");
  char host[256];
  if (len == 0 || len >= sizeof host) return 0;
  memcpy(host, start, len);
  host[len] = '\0';
  return is_stalled_host(host);
}

CURLcode curl_easy_setopt(CURL* curl, CURLoption option, ...) {
  static setopt_fn real;
  if (real == NULL) real = (setopt_fn)dlsym(RTLD_NEXT, "curl_easy_setopt");
  va_list args;
  va_start(args, option);
  CURLcode rc;
  if (option < CURLOPTTYPE_OBJECTPOINT) {
    rc = real(curl, option, va_arg(args, long));
  } else if (option < CURLOPTTYPE_OFF_T) {
    void* value = va_arg(args, void*);
    rc = real(curl, option, value);
    if (option == CURLOPT_URL && rc == CURLE_OK) {
      const int stalled = url_has_stalled_host((const char*)value);
      real(curl, CURLOPT_DNS_CACHE_TIMEOUT, stalled ? 0L : 60L);
      real(curl, CURLOPT_FRESH_CONNECT, stalled ? 1L : 0L);
      real(curl, CURLOPT_FORBID_REUSE, stalled ? 1L : 0L);
    }
  } else if (option < CURLOPTTYPE_BLOB) {
    rc = real(curl, option, va_arg(args, curl_off_t));
  } else {
    rc = real(curl, option, va_arg(args, void*));
  }
  va_end(args);
  return rc;
}
