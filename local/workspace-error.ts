/** The local workspace's errors: one class, a stable code per cause, a message that says what to do. */
export type WorkspaceErrorCode =
  | "WORKSPACE_BUSY"
  | "WORKSPACE_STILL_OPEN"
  | "WORKSPACE_MISSING"
  | "WORKSPACE_UNREADABLE";

export class WorkspaceError extends Error {
  override readonly name = "WorkspaceError";
  constructor(
    readonly code: WorkspaceErrorCode,
    message: string,
  ) {
    super(message);
  }
}
