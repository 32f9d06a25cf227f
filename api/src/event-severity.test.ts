import { describe, expect, it } from 'vitest';
import { eventSeverity, eventView } from './resources/event.js';

const severity = (kind: string, data: Record<string, unknown> = {}) => eventSeverity({ kind, data });

describe('the severity of a journal event', () => {
  it('reads a job update from the state of the row it carries', () => {
    expect(severity('job_update', { state: 'failed' })).toBe('error');
    expect(severity('job_update', { state: 'cancelled' })).toBe('warning');
    expect(severity('job_update', { state: 'uploading' })).toBe('info');
    expect(severity('job_update', { state: 'succeeded' })).toBe('info');
  });

  it('reads maintenance, updates and GitOps applies from their outcome', () => {
    expect(severity('maint_done', { ok: false })).toBe('error');
    expect(severity('maint_done', { ok: true })).toBe('info');
    expect(severity('update_done', { ok: false })).toBe('error');
    expect(severity('update_taken_over', { ok: true })).toBe('info');
    expect(severity('gitops_applied', { ok: false })).toBe('warning');
    expect(severity('gitops_applied', { ok: true })).toBe('info');
  });

  it('warns of an unverified FC target only where there are HBAs', () => {
    expect(severity('fc_state', { verified: false, no_hba: false })).toBe('warning');
    expect(severity('fc_state', { verified: false, no_hba: true })).toBe('info');
    expect(severity('fc_state', { verified: true })).toBe('info');
  });

  it('gives kinds that only ever report trouble their severity, and unknown kinds info', () => {
    expect(severity('emu_media_error')).toBe('error');
    expect(severity('gitops_revision_invalid')).toBe('error');
    expect(severity('system')).toBe('warning');
    expect(severity('emu_chap_lockout')).toBe('warning');
    expect(severity('cart_minted')).toBe('info');
    expect(severity('emu_something_new', { ok: false })).toBe('info');
  });

  it('answers the list form without the payload, with the severity', () => {
    const record = {
      id: 7,
      ts: '2026-12-02T06:00:00Z',
      kind: 'job_update',
      subject: 'job:7',
      detail: 'export A01L8: failed (S3 refused)',
      data: { state: 'failed', label: 'A01L8' },
    };
    expect(eventView(record)).toEqual({
      id: 7,
      ts: '2026-12-02T06:00:00Z',
      kind: 'job_update',
      subject: 'job:7',
      detail: 'export A01L8: failed (S3 refused)',
      severity: 'error',
    });
  });
});
