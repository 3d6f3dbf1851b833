/**
 * Two projects: the suite on one Redis (its global setup starts redis-server and the MongoDB
 * stand-in), and the tests on a Redis Cluster (test/cluster; their global setup also starts a
 * cluster of 3 masters and 3 replicas from redis-server).
 */
const common = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  // Every answer of the service is checked against its OpenAPI document.
  setupFilesAfterEnv: ['<rootDir>/test/support/contract-setup.ts'],
};

/** @type {import('jest').Config} */
module.exports = {
  testTimeout: 60_000,
  // Two cores: two test files at a time, each with its own database and Redis prefix.
  maxWorkers: 2,
  projects: [
    {
      ...common,
      displayName: 'redis',
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.test.ts'],
      testPathIgnorePatterns: ['/test/cluster/'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
    {
      ...common,
      displayName: 'redis-cluster',
      roots: ['<rootDir>/test/cluster'],
      testMatch: ['**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/cluster-global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
