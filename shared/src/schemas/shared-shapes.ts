/** Shapes the response schemas share. */
export const timestamp = {
  type: 'string',
  format: 'date-time',
  description: 'ISO-8601 UTC with milliseconds',
  examples: ['2026-11-21T07:11:04.092Z'],
} as const;

export const positiveInt = { type: 'integer', minimum: 1 } as const;
