"""What a workspace may do on its own: its trust state and how its project config is narrowed
(`trust`), what a shell command really runs and touches (`shell`), what a path really is once
symlinks, hard links and case are accounted for (`paths`). `server.permissions` judges a tool
call with these; nothing here imports a tool."""
