import { Job, isoNow } from '@vtl/api';

/** An export job record of library 1 on node n1, uploading unless `fields` say otherwise. */
export const exportJob = (id: number, fields: Partial<Job> = {}): Job =>
  Job.parse({
    id,
    kind: 'export',
    state: 'uploading',
    label: `JXE00${id}L8`,
    library: 1,
    remote_id: 1,
    generation: '20260101T000000Z',
    node: 'n1',
    bytes_done: 0,
    chunks_done: 0,
    detail: '',
    created_at: isoNow(),
    updated_at: isoNow(),
    ...fields,
  });
