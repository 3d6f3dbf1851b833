export const COMMAND_KINDS = ['READ_TABLE_STATE', 'REQUEST_BILL', 'EXPORT_DATA', 'FETCH_REMOTE_MENU'] as const;
export type CommandKind = (typeof COMMAND_KINDS)[number];

/** The kinds a customer app may ask for; the others are the operator's. */
export const CUSTOMER_COMMAND_KINDS = ['READ_TABLE_STATE', 'REQUEST_BILL'] as const;
