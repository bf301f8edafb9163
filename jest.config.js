/** Unit tests need no database; integration tests share one PostgreSQL per run (global setup). */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest'] },
  globalSetup: '<rootDir>/test/helpers/global-setup.mjs',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.mjs',
  maxWorkers: 2,
  // A worker's heap grew to 1.1-1.8 GB over a whole run (2.3 GB resident), and tearing that down
  // took 0.4-0.5 s at exit, near jest's 500 ms: under load, "a worker process has failed to exit
  // gracefully". A worker past this after a file is replaced by a fresh one.
  workerIdleMemoryLimit: '1GB',
  testTimeout: 60000,
};
