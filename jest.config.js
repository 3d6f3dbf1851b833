/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // Every answer of the service is checked against its OpenAPI document.
  setupFilesAfterEnv: ['<rootDir>/test/support/contract-setup.ts'],
  testTimeout: 60_000,
  // Two cores: two test files at a time, each with its own database and Redis prefix.
  maxWorkers: 2,
};
