/** The last few problems (failed reads and actions), until dismissed. */
export function Problems({ problems, onDismiss }: { problems: string[]; onDismiss(): void }) {
  if (problems.length === 0) return null;
  return (
    <div class="problems" role="alert">
      {problems.map((problem, i) => (
        <p key={i}>{problem}</p>
      ))}
      <button type="button" class="quiet" onClick={onDismiss}>
        Dismiss
      </button>
    </div>
  );
}
