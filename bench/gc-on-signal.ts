/**
 * Benchmark-only preload for API processes started with --expose-gc: a full garbage collection
 * on SIGUSR2, so that memory figures count live objects, not garbage awaiting collection.
 */
const collect = (globalThis as { gc?: () => void }).gc;
if (collect) process.on('SIGUSR2', () => collect());
