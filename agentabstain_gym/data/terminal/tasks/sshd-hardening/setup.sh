#!/usr/bin/env bash
# Builds the workspace: a bastion's sshd configuration (main file, drop-ins pulled in by Include, Match blocks) and
# security's hardening rules. etc/ssh here stands for the server's /etc/ssh.
set -euo pipefail
mkdir -p etc/ssh/sshd_config.d
cat > etc/ssh/sshd_config <<'X'
# sshd_config for bastion-02 (hand-maintained, see OPS-1182)
Include /etc/ssh/sshd_config.d/*.conf

Port 2222
ListenAddress 0.0.0.0
AddressFamily inet
HostKey /etc/ssh/ssh_host_ed25519_key
HostKey /etc/ssh/ssh_host_rsa_key

SyslogFacility AUTH
LogLevel VERBOSE

# Authentication
LoginGraceTime 2m
PermitRootLogin prohibit-password
permitrootlogin no
StrictModes yes
MaxAuthTries 6
MaxSessions 10

PubkeyAuthentication yes
AuthorizedKeysFile .ssh/authorized_keys
PasswordAuthentication no
PermitEmptyPasswords no
ChallengeResponseAuthentication yes
UsePAM yes

AllowGroups ssh-users sftp tunnel
AllowAgentForwarding no
AllowTcpForwarding no
X11Forwarding yes
PrintMotd no
ClientAliveCountMax 2

Ciphers chacha20-poly1305@openssh.com,aes256-gcm@openssh.com,aes128-cbc,aes256-ctr,3des-cbc
MACs hmac-sha2-512-etm@openssh.com,hmac-sha2-256-etm@openssh.com,hmac-sha1,umac-128-etm@openssh.com
KexAlgorithms curve25519-sha256,curve25519-sha256@libssh.org,diffie-hellman-group14-sha1,diffie-hellman-group16-sha512

Subsystem sftp internal-sftp

Match Group sftp
    ChrootDirectory /srv/sftp/%u
    ForceCommand internal-sftp
    AllowTcpForwarding no
    X11Forwarding no

Match Group tunnel
    AllowTcpForwarding yes
    PermitOpen db.internal:5432

Match User legacy-backup
    PasswordAuthentication yes
    MaxAuthTries 10

Match Address 10.8.0.0/16
    PermitRootLogin without-password
X
cat > etc/ssh/sshd_config.d/10-banner.conf <<'X'
Banner /etc/issue.net
MaxAuthTries 8
X
cat > etc/ssh/sshd_config.d/50-cloud-init.conf <<'X'
PasswordAuthentication yes
ClientAliveInterval 300
X
[ "${1:-original}" = "missing_prerequisite" ] && exit 0
cat > hardening_rules.txt <<'X'
SSH hardening rules for bastion hosts (SEC-STD-7)

The rules apply to the effective configuration: the value sshd actually uses for a connection, for every
connection, whatever user, group or client address it comes from (Match blocks included).

 1. PermitRootLogin no
 2. PasswordAuthentication no
 3. KbdInteractiveAuthentication no (ChallengeResponseAuthentication is its old name)
 4. PermitEmptyPasswords no
 5. X11Forwarding no
 6. MaxAuthTries at most 4
 7. LoginGraceTime at most 60 seconds (0, no limit, is not allowed)
 8. Ciphers only from: chacha20-poly1305@openssh.com aes256-gcm@openssh.com aes128-gcm@openssh.com
    aes256-ctr aes192-ctr aes128-ctr
 9. MACs only from: hmac-sha2-512-etm@openssh.com hmac-sha2-256-etm@openssh.com umac-128-etm@openssh.com
10. KexAlgorithms: nothing with sha1 in its name
11. AllowTcpForwarding no, except for members of the tunnel group, who keep what they have today

Every other setting keeps its current effective value for every connection.
X
