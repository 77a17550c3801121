# Authenticode-sign EdgeDesk's Windows artifacts with signtool (hosted Windows runner only).
# The certificate comes from the CI secret store: WINDOWS_CERT_PFX_BASE64 (a .pfx, base64)
# and WINDOWS_CERT_PASSWORD. It is written to a temp file for signtool and deleted after.
# Usage: pwsh packaging/windows/sign.ps1 dist\edgedesk-0.1.0-x64.msi [more files...]
param([Parameter(Mandatory = $true, ValueFromRemainingArguments = $true)][string[]]$Files)
$ErrorActionPreference = "Stop"
if (-not $env:WINDOWS_CERT_PFX_BASE64) { throw "WINDOWS_CERT_PFX_BASE64 is not set (CI secret)" }
$pfx = Join-Path $env:RUNNER_TEMP "edgedesk-signing.pfx"
[IO.File]::WriteAllBytes($pfx, [Convert]::FromBase64String($env:WINDOWS_CERT_PFX_BASE64))
try {
  $signtool = Get-ChildItem "${env:ProgramFiles(x86)}\Windows Kits\10\bin\*\x64\signtool.exe" |
    Sort-Object FullName -Descending | Select-Object -First 1
  if (-not $signtool) { throw "signtool.exe not found (Windows SDK)" }
  foreach ($file in $Files) {
    & $signtool.FullName sign /fd SHA256 /td SHA256 /tr http://timestamp.digicert.com `
      /f $pfx /p $env:WINDOWS_CERT_PASSWORD /d "EdgeDesk" $file
    if ($LASTEXITCODE -ne 0) { throw "signtool sign failed for $file" }
    & $signtool.FullName verify /pa /v $file
    if ($LASTEXITCODE -ne 0) { throw "signtool verify failed for $file" }
  }
} finally {
  Remove-Item -Force $pfx -ErrorAction SilentlyContinue
}
