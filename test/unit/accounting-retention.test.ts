import { retentionCutoff } from '../../shared/access/retention-cutoff';

describe('retentionCutoff', () => {
  it('keeps the current month and the N before it, across year boundaries', () => {
    expect(retentionCutoff('2026-11-26', 13)).toBe('2025-10-01');
    expect(retentionCutoff('2026-01-01', 1)).toBe('2025-12-01');
    expect(retentionCutoff('2026-01-31', 13)).toBe('2024-12-01');
    expect(retentionCutoff('2026-12-31', 12)).toBe('2025-12-01');
    expect(retentionCutoff('2026-03-15', 24)).toBe('2024-03-01');
  });

  it('0 keeps everything', () => {
    expect(retentionCutoff('2026-11-26', 0)).toBeNull();
  });
});
