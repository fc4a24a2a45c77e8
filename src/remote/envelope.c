/* envelope.c — signing and checking remote values with nettle's HMAC-SHA-256 (loaded with
 * dlopen, remote/nettle.h). The HMAC covers the Redis key name, so a valid value moved under
 * another key fails here already (and again at the entry's own key check). */
#include <string.h>

#include "remote/envelope.h"
#include "remote/nettle.h"

#define MAGIC "PTXJITS" /* 8 bytes with its NUL */
#define FLAG_SIGNED 1u
#define KEY_ID_SIZE 8

static void key_id(const pj_nettle *nettle, uint8_t out[KEY_ID_SIZE],
                   const unsigned char *secret, size_t size)
{
    static const char label[] = "ptxjit remote cache key id";
    struct sha256_ctx ctx;
    uint8_t digest[SHA256_DIGEST_SIZE];
    nettle->hash_init(&ctx);
    nettle->hash_update(&ctx, sizeof label, (const uint8_t *)label);
    nettle->hash_update(&ctx, size, secret);
    nettle->hash_digest(&ctx, sizeof digest, digest);
    memcpy(out, digest, KEY_ID_SIZE);
}

/* Length-prefixed name, so that (name, entry) pairs cannot be re-split into another pair. */
static void mac(const pj_nettle *nettle, uint8_t out[SHA256_DIGEST_SIZE],
                const unsigned char *secret, size_t secret_size, const char *name,
                const char *entry, size_t entry_size)
{
    struct hmac_sha256_ctx ctx;
    uint64_t name_size = strlen(name);
    nettle->mac_set_key(&ctx, secret_size, secret);
    nettle->mac_update(&ctx, sizeof name_size, (const uint8_t *)&name_size);
    nettle->mac_update(&ctx, (size_t)name_size, (const uint8_t *)name);
    nettle->mac_update(&ctx, entry_size, (const uint8_t *)entry);
    nettle->mac_digest(&ctx, SHA256_DIGEST_SIZE, out);
}

char *pj_envelope_seal(size_t *size, const unsigned char *secret, size_t secret_size,
                       const char *name, const char *entry, size_t entry_size)
{
    const pj_nettle *nettle = NULL;
    if (secret && pj_nettle_load(&nettle) != PTXJIT_OK)
        return NULL;
    pj_strbuf sb;
    pj_sb_init(&sb);
    uint32_t version = PJ_ENVELOPE_VERSION, flags = secret ? FLAG_SIGNED : 0;
    uint8_t id[KEY_ID_SIZE] = {0}, digest[SHA256_DIGEST_SIZE] = {0};
    if (secret) {
        key_id(nettle, id, secret, secret_size);
        mac(nettle, digest, secret, secret_size, name, entry, entry_size);
    }
    pj_sb_append_n(&sb, MAGIC, 8);
    pj_sb_append_n(&sb, (const char *)&version, 4);
    pj_sb_append_n(&sb, (const char *)&flags, 4);
    pj_sb_append_n(&sb, (const char *)id, sizeof id);
    pj_sb_append_n(&sb, (const char *)digest, sizeof digest);
    pj_sb_append_n(&sb, entry, entry_size);
    *size = sb.length;
    return pj_sb_take(&sb);
}

const char *pj_envelope_open(const char **entry, size_t *entry_size, const unsigned char *secret,
                             size_t secret_size, const char *name, const char *value,
                             size_t size)
{
    if (size < PJ_ENVELOPE_HEADER_SIZE)
        return "truncated";
    if (memcmp(value, MAGIC, 8) != 0)
        return "not a ptxjit remote entry";
    uint32_t version, flags;
    memcpy(&version, value + 8, 4);
    memcpy(&flags, value + 12, 4);
    if (version != PJ_ENVELOPE_VERSION)
        return "written by another envelope version";
    *entry = value + PJ_ENVELOPE_HEADER_SIZE;
    *entry_size = size - PJ_ENVELOPE_HEADER_SIZE;
    if (!secret)
        return NULL;
    if (!(flags & FLAG_SIGNED))
        return "not signed (written in the unsigned mode)";
    const pj_nettle *nettle;
    if (pj_nettle_load(&nettle) != PTXJIT_OK)
        return "cannot be checked: nettle, which checks signatures, cannot be loaded";
    uint8_t id[KEY_ID_SIZE], digest[SHA256_DIGEST_SIZE];
    key_id(nettle, id, secret, secret_size);
    if (memcmp(id, value + 16, KEY_ID_SIZE) != 0)
        return "signed with another key";
    mac(nettle, digest, secret, secret_size, name, *entry, *entry_size);
    if (!nettle->equal(digest, value + 16 + KEY_ID_SIZE, SHA256_DIGEST_SIZE))
        return "its signature is wrong (forged, or changed since it was signed)";
    return NULL;
}
