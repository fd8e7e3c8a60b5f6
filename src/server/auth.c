/* SPDX-License-Identifier: Apache-2.0 */
/* Who may ask: the bearer tokens (the clients', the operator's), and the directories a
 * client's paths may name. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>

#include "server/server_internal.h"

/* Constant-time comparison of the value of an Authorization header with "Bearer TOKEN" (the
 * scheme's name is case-insensitive, RFC 7235). An empty or absent token matches nothing. */
static bool bearer_is(const char *h, const char *tok)
{
    if (!tok || !tok[0] || !h || strncasecmp(h, "Bearer ", 7) != 0)
        return false;
    h += 7;
    size_t a = strlen(h), b = strlen(tok);
    unsigned char diff = (unsigned char)(a != b);
    for (size_t i = 0; i < b; i++)
        diff |= (unsigned char)(tok[i] ^ (i < a ? h[i] : 0));
    return diff == 0;
}

bool auth_ok(const server *s, struct MHD_Connection *c)
{
    if (s->cfg.no_auth)
        return true;
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    bool client = bearer_is(h, s->cfg.token), admin = bearer_is(h, s->cfg.admin_token);
    return client | admin;
}

bool auth_admin(const server *s, struct MHD_Connection *c)
{
    if (s->cfg.no_auth)
        return true;
    return bearer_is(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization"),
                     s->cfg.admin_token);
}

/* The port of an address "HOST:PORT" or "[V6]:PORT" (0 when it has none). */
static unsigned addr_port(const char *a)
{
    const char *rb = a[0] == '[' ? strchr(a, ']') : NULL;
    const char *colon = strrchr(rb ? rb : a, ':');
    return colon ? (unsigned)strtoul(colon + 1, NULL, 10) : 0;
}

bool auth_browser_ok(const server *s, struct MHD_Connection *c, char *why, size_t wlen)
{
    const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
    if (origin) {
        bool ok = false;
        for (unsigned i = 0; i < s->cfg.n_allow_origin && !ok; i++)
            ok = !strcasecmp(origin, s->cfg.allow_origin[i]);
        if (!ok) {
            snprintf(why, wlen, "a request from a web page (Origin %.100s) is refused: "
                     "allow_origin lists those allowed", origin);
            return false;
        }
    }
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
    if (!host)
        return true;   /* HTTP/1.0 without a Host: not a browser's */
    /* the listener: by its socket (set before its libmicrohttpd daemon starts) */
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_DAEMON);
    const union MHD_DaemonInfo *di =
        ci ? MHD_get_daemon_info(ci->daemon, MHD_DAEMON_INFO_LISTEN_FD) : NULL;
    unsigned li = 0;
    while (di && li < SERVER_MAX_LISTEN && s->fd[li] != di->listen_fd)
        li++;
    if (!di)
        li = SERVER_MAX_LISTEN;
    if (li < SERVER_MAX_LISTEN && s->unix_path[li][0])
        return true;
    for (unsigned i = 0; i < s->cfg.n_allow_host; i++) {
        const char *a = s->cfg.allow_host[i];
        size_t n = strlen(a);
        if (!strcmp(a, "*") || !strcasecmp(host, a) ||
            (!strncasecmp(host, a, n) && host[n] == ':' && !strchr(a, ':')))
            return true;
    }
    /* the name and port of the Host */
    char name[256];
    const char *port = NULL;
    if (host[0] == '[') {
        const char *rb = strchr(host, ']');
        if (rb && (size_t)(rb - host) < sizeof name) {
            snprintf(name, sizeof name, "%.*s", (int)(rb - host - 1), host + 1);
            port = rb[1] == ':' ? rb + 2 : rb[1] ? NULL : "";
        }
    } else {
        const char *colon = strchr(host, ':');
        size_t n = colon ? (size_t)(colon - host) : strlen(host);
        if (n < sizeof name) {
            snprintf(name, sizeof name, "%.*s", (int)n, host);
            port = colon ? colon + 1 : "";
        }
    }
    unsigned lport = li < SERVER_MAX_LISTEN ? addr_port(s->addr[li]) : 0;
    bool port_ok = port && (port[0] ? strtoul(port, NULL, 10) == lport &&
                                          strspn(port, "0123456789") == strlen(port)
                                    : lport == 80);
    unsigned char ip[16];
    bool literal = port && (host[0] == '[' ? inet_pton(AF_INET6, name, ip) == 1
                                           : inet_pton(AF_INET, name, ip) == 1);
    bool loopback = false;
    if (li < SERVER_MAX_LISTEN) {
        const char *a = s->addr[li];
        loopback = !strncmp(a, "127.", 4) || !strncmp(a, "[::1]:", 6);
    }
    if (port_ok && (literal || (loopback && !strcasecmp(name, "localhost"))))
        return true;
    snprintf(why, wlen, "Host %.100s is not this listener's address (a web page's request "
             "through DNS rebinding?): allow_host lists other names", host);
    return false;
}

bool path_allowed(const server *s, const char *path, char *why, size_t wlen)
{
    if (s->cfg.n_allow == 0)
        return true;
    char *rp = realpath(path, NULL);
    if (!rp) {
        snprintf(why, wlen, "%s: %s", path, strerror(errno));
        return false;
    }
    bool ok = false;
    for (unsigned i = 0; i < s->cfg.n_allow && !ok; i++) {
        const char *d = s->allow_real[i];
        size_t n = strlen(d);
        ok = strncmp(rp, d, n) == 0 && (rp[n] == '/' || (n == 1 && d[0] == '/'));
    }
    if (!ok)
        snprintf(why, wlen, "%s is outside the allowed directories (--allow-dir)", path);
    free(rp);
    return ok;
}

