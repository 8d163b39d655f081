/*
 * aliveconf.h - ServerAliveInterval and ServerAliveCountMax from ssh_config.
 *
 * libssh 0.10 reads ssh_config but skips these two keywords, so envctl
 * reads them itself, the way ssh(1) does: the first value obtained wins;
 * Host patterns (with * ? and !negation), Match all and Match host or
 * originalhost, and Include (glob, nested up to 16 deep) are understood;
 * any other Match criterion counts as not matching.  Thread-safe.
 */
#ifndef ENVCTL_CONTROLLER_SSH_ALIVECONF_H
#define ENVCTL_CONTROLLER_SSH_ALIVECONF_H

/*
 * For host name: *interval and *count get the values of config (NULL:
 * ~/.ssh/config, then /etc/ssh/ssh_config), or are left alone where the
 * files say nothing (or cannot be read).  Values already >= 0 win.
 */
void	aliveconf_read(const char *config, const char *name, int *interval,
	    int *count);

#endif
