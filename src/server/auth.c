/* SPDX-License-Identifier: Apache-2.0 */
/* Who may ask: the bearer tokens (the clients', the operator's), and the directories a
 * client's paths may name. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

