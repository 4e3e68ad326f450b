# The control plane image: web, worker, beat and the local emulator (which runs the trainers,
# so it carries the `trainers` extra with the CPU build of torch, and the `jax` extra for TPU
# jobs, which the emulator plays on the CPU).
# The project is installed as a package (not editable) from the whole build context, so what
# the image runs is what pyproject.toml ships: a new app, template, static file or data file
# needs no line here. .dockerignore keeps the VCS, virtualenvs and local state out.
FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    CP_VAR_DIR=/app/var
WORKDIR /app
COPY . .
RUN pip install --no-cache-dir -c constraints.txt \
      --extra-index-url https://download.pytorch.org/whl/cpu ".[trainers,jax,ray]"
# Hashed, gzipped static files the web server caches for a year (controlplane/core/storage.py).
RUN DEBUG=true python manage.py collectstatic --noinput -v 0
EXPOSE 8000 8470
CMD ["gunicorn", "config.asgi", "--bind", "0.0.0.0:8000", "--workers", "2", "--worker-class", "asgi", "--asgi-lifespan", "off", "--keep-alive", "5"]
