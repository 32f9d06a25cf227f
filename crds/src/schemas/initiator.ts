/**
 * The TapeInitiator spec is the body of POST /api/targets/acls, defined once in @vtl/api; this
 * module only re-exports it (and its WWPN pattern) for the CRD generator and its tests.
 */
export { InitiatorSpec, WWPN_INPUT } from '@vtl/api';
