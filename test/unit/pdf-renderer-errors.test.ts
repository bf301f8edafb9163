/** The pool's failures cross from the renderer's worker thread as data and come back as their classes. */
import {
  fromWire,
  PoolClosedError,
  QueueFullError,
  RenderTimeoutError,
  toWire,
} from '../../services/pdf-renderer/errors';

describe('pdf-renderer errors across the thread boundary', () => {
  it.each([
    ['QueueFullError', new QueueFullError(), QueueFullError],
    ['PoolClosedError', new PoolClosedError(), PoolClosedError],
    ['RenderTimeoutError', new RenderTimeoutError(1500), RenderTimeoutError],
  ])('%s comes back as itself, with its message and the worker stack', (_name, original, Class) => {
    const revived = fromWire(structuredClone(toWire(original)));
    expect(revived).toBeInstanceOf(Class);
    expect([revived.name, revived.message, revived.stack]).toEqual([original.name, original.message, original.stack]);
  });

  it('any other failure keeps its name and message as a plain Error', () => {
    const revived = fromWire(toWire(Object.assign(new Error('browser closed'), { name: 'TargetClosedError' })));
    expect(revived).not.toBeInstanceOf(QueueFullError);
    expect([revived.name, revived.message]).toEqual(['TargetClosedError', 'browser closed']);
    expect(fromWire(toWire('text thrown'))).toMatchObject({ name: 'Error', message: 'text thrown' });
  });
});
