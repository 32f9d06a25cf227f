/** Offsite copies: S3 remotes, the bucket layout, and moving cartridge images to and from buckets. */
export {};
