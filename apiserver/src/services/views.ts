import { VtlError } from '@vtl/api';
import type { AppContext } from '../context.js';
import type { ViewCache } from './view-cache.js';

/** The context's view cache; buildApp starts one before any route is registered. */
export function viewsOf(ctx: AppContext): ViewCache {
  if (!ctx.views)
    throw new VtlError('internal', 'The view cache was not started; build the app with buildApp().');
  return ctx.views;
}
