// One implementation lives in @vtl/store, whose own tests need it and cannot depend on this package.
export { waitFor, type WaitOptions } from '@vtl/store';
