import type { Connection } from './live-stream';

export interface HeaderProps {
  title: string;
  operator: boolean;
  /** The operator's role, shown beside the mode. */
  role?: string;
  connection: Connection;
  onRetry(): void;
  onSignOut(): void;
}

/** The board's top bar: the location, the mode, the stream's connection, and Sign out. */
export function Header({ title, operator, role, connection, onRetry, onSignOut }: HeaderProps) {
  return (
    <header class="topbar">
      <h1>
        {title} <span class="mode">{operator ? `Operator${role ? ` · ${role}` : ''}` : 'Kitchen'}</span>
      </h1>
      <ConnectionBadge connection={connection} onRetry={onRetry} />
      <button type="button" class="quiet" onClick={onSignOut}>
        Sign out
      </button>
    </header>
  );
}

const CONNECTION_TEXT: Record<Connection['state'], string> = {
  connecting: 'Connecting…',
  live: 'Live',
  waiting: 'Disconnected: reconnecting',
  stopped: 'Stopped',
};

/** The event stream's state, said when it changes; while it waits to reconnect, Retry now. */
function ConnectionBadge({ connection, onRetry }: { connection: Connection; onRetry(): void }) {
  return (
    <div class="connection" data-connection={connection.state}>
      <span class="dot" aria-hidden="true" />
      <span role="status" aria-live="polite">
        {CONNECTION_TEXT[connection.state]}
      </span>
      {connection.state === 'waiting' && (
        <button type="button" class="quiet" onClick={onRetry}>
          Retry now
        </button>
      )}
    </div>
  );
}
