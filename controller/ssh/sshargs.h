/*
 * sshargs.h - ansible_ssh_common_args, and the proxy words of ssh(1).
 *
 * sshargs_parse() splits the variable as Ansible does (Python's
 * shlex.split) and keeps the ssh(1) options envctl applies; any other
 * option or word is refused by name, never ignored.  As with ssh -o, the
 * first value of an option wins, and the first of ProxyCommand and
 * ProxyJump (-J) wins over the other.  Pure string work: thread-safe.
 */
#ifndef ENVCTL_CONTROLLER_SSH_SSHARGS_H
#define ENVCTL_CONTROLLER_SSH_SSHARGS_H

struct buf;
struct err;

struct ssh_args {
	char	*proxy_command;	/* -o ProxyCommand=; "none" kept */
	char	*proxy_jump;	/* -J, -o ProxyJump=; "none" kept */
	char	*known_hosts;	/* -o UserKnownHostsFile= */
	int	 alive_interval; /* -o ServerAliveInterval=; -1: unset */
	int	 alive_count;	/* -o ServerAliveCountMax=; -1: unset */
};

/*
 * Fills a (all of it) from args (NULL: nothing).  EPARSE (an open quote),
 * EUNSUPPORTED (an option envctl does not apply, named), EINVALID (a bad
 * value).  Release a with sshargs_release() in every case.
 */
int	sshargs_parse(struct ssh_args *a, const char *args, struct err *err);
void	sshargs_release(struct ssh_args *a);
/*
 * Appends to out the ProxyCommand that ProxyJump hops ("[user@]host[:port]"
 * or ssh:// URIs, comma-separated) stand for, as libssh 0.10 makes it from
 * ssh_config: "ssh -o BatchMode=yes [-F config] [-l U] [-p P] [-J FIRST..]
 * -W '[%h]:%p' LAST".  EINVALID for an empty or malformed hop.
 */
int	sshargs_jump_command(struct buf *out, const char *hops,
	    const char *config, struct err *err);
/*
 * Appends pc to out, with "-o BatchMode=yes" after its first word when
 * that is ssh: an ssh that asks for a password would wait for a terminal.
 */
void	sshargs_batch_command(struct buf *out, const char *pc);
/*
 * The host an "ssh ..." ProxyCommand connects to first ("host" or
 * "host:port": the first -J hop, else its destination), in a new string;
 * NULL when pc is no ssh command or names no destination.
 */
char	*sshargs_first_hop(const char *pc);

#endif
