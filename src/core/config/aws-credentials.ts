/**
 * S3 credentials from the AWS SDK's standard variables of `env`, when both are set; otherwise
 * undefined and the SDK's own chain applies (shared config, SSO, web identity, instance roles).
 * Read from the given environment rather than left to the SDK, which reads process.env only,
 * so that a program running watch in-process with its own environment is honoured. These are
 * AWS's variables, not htorder settings: docs/configuration.md lists them beside the table.
 */
export function awsCredentials(
  env: Record<string, string | undefined>,
): { accessKeyId: string; secretAccessKey: string } | undefined {
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  return accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined;
}
