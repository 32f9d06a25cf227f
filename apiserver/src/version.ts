/** The running version, `v<major>.<minor>.<patch>` (§9). */
export const VERSION = 'v0.1.0';
