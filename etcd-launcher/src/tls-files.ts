/**
 * A CA file and one identity's certificate and key, as paths: what etcd serves with, and what
 * a client presents (the store's StoreTls has the same shape, so a Pki identity passes as one).
 */
export interface TlsFiles {
  caFile: string;
  certFile: string;
  keyFile: string;
}
