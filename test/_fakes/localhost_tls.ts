/**
 * A self-signed certificate for 127.0.0.1 and localhost (valid until 2126), for tests that need a real HTTPS
 * server: a client is told to trust it (wget's `ca_certificate`, Deno's `caCerts`), never the system.
 * Made with `openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 36500
 * -subj /CN=127.0.0.1 -addext "subjectAltName=IP:127.0.0.1,DNS:localhost"`.
 *
 * @module
 */

/** The certificate, PEM. */
export const LOCALHOST_CERT = `
-----BEGIN CERTIFICATE-----
MIIBnDCCAUGgAwIBAgIUPOMfNAyYX0PuvyWcx/E1Re8AY/EwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJMTI3LjAuMC4xMCAXDTI2MTIwMzAyMDY0MVoYDzIxMjYxMTA5
MDIwNjQxWjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAARiyi02joqPINv6k9kTtJiAYtyZqYVzXQhTe0EONFgF79mUZ/RMqAQL
HA5qHZhJjjtZUtReZdk6/v9duqlXuhIWo28wbTAdBgNVHQ4EFgQUioY3mmu8Vtyo
+LpNBLwMHgz5gRMwHwYDVR0jBBgwFoAUioY3mmu8Vtyo+LpNBLwMHgz5gRMwDwYD
VR0TAQH/BAUwAwEB/zAaBgNVHREEEzARhwR/AAABgglsb2NhbGhvc3QwCgYIKoZI
zj0EAwIDSQAwRgIhAKe9bs1o8e0cH9rUIUhF45i2y2zAk7AMjXszb8SoSysQAiEA
lpNiRCXk8ADXGxNX4FezvLSgogeTnftYz3PzdMZ7moI=
-----END CERTIFICATE-----
`.trimStart();

/** Its private key, PEM. */
export const LOCALHOST_KEY = `
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgRdRoiqD6mffCD6Gp
nwEpO8KWRDVCfj5/8PdxPtZcE3ChRANCAARiyi02joqPINv6k9kTtJiAYtyZqYVz
XQhTe0EONFgF79mUZ/RMqAQLHA5qHZhJjjtZUtReZdk6/v9duqlXuhIW
-----END PRIVATE KEY-----
`.trimStart();
