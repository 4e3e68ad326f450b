# The control plane image: web, worker, beat and the local emulator (which runs the trainers,
# so it carries the `trainers` extra with the CPU build of torch).
# The project is installed as a package (not editable) from the whole build context, so what
# the image runs is what pyproject.toml ships: a new app, template, static file or data file
# needs no line here. .dockerignore keeps the VCS, virtualenvs and local state out.
FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    CP_VAR_DIR=/app/var
WORKDIR /app
COPY . .
RUN pip install --no-cache-dir -c constraints.txt \
      --extra-index-url https://download.pytorch.org/whl/cpu ".[trainers]"
EXPOSE 8000 8470
CMD ["gunicorn", "config.wsgi", "--bind", "0.0.0.0:8000", "--workers", "2", "--threads", "4", "--keep-alive", "5"]
