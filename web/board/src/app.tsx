/** The page: sign-in, then the board; a remembered sign-in (if the user asked for one) is tried first. */
import { useEffect, useState } from 'preact/hooks';
import { apiFor, BoardApi, Credentials } from './api';
import { Board } from './board';
import { forget, remember, remembered } from './credentials';
import { AuthError } from './http';
import { SignIn } from './sign-in';

interface Session {
  api: BoardApi;
  title: string;
}

export function App() {
  const [session, setSession] = useState<Session | undefined>(undefined);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const [checking, setChecking] = useState(() => remembered() !== undefined);

  useEffect(() => {
    const saved = remembered();
    if (!saved) return;
    const api = apiFor(saved);
    api
      .signIn()
      .then((title) => setSession({ api, title }))
      .catch((err: unknown) => {
        if (err instanceof AuthError) forget();
        setNotice(`Could not sign in again: ${(err as Error).message}`);
      })
      .finally(() => setChecking(false));
  }, []);

  const signedIn = (credentials: Credentials, api: BoardApi, title: string, keep: boolean) => {
    if (keep) remember(credentials);
    else forget();
    setNotice(undefined);
    setSession({ api, title });
  };

  const signOut = (message?: string) => {
    forget();
    setSession(undefined);
    setNotice(message ? `Signed out: ${message}.` : undefined);
  };

  if (checking) return <p class="loading">Signing in…</p>;
  if (!session) return <SignIn notice={notice} onSignedIn={signedIn} />;
  return <Board api={session.api} title={session.title} onSignOut={signOut} />;
}
