import { Duration, RemovalPolicy } from "aws-cdk-lib";
import { type CfnStage, HttpApi, HttpMethod } from "aws-cdk-lib/aws-apigatewayv2";
import { HttpIamAuthorizer, HttpJwtAuthorizer } from "aws-cdk-lib/aws-apigatewayv2-authorizers";
import { HttpLambdaIntegration } from "aws-cdk-lib/aws-apigatewayv2-integrations";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import { LogGroup, type RetentionDays } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import { API_METHODS, API_ROUTES, API_WRITE_METHODS, API_WRITE_ROUTES } from "convoseg/api";
import type { ApiConfig } from "./config.js";
import { PipelineFunction } from "./function.js";
import { SEARCH_MEMORY, type SearchIndex, searchFunctionProps } from "./search.js";
import type { Storage } from "./storage.js";

export interface ReadApiProps {
  readonly config: ApiConfig;
  readonly storage: Storage;
  readonly logRetention: RetentionDays;
  /**
   * The search index `GET /search` reads (absent: the route answers 501).
   * @default - search off
   */
  readonly search?: SearchIndex;
}

/**
 * The read API (docs/api.md), deployed only with `api`: an HTTP API whose routes are
 * IAM-authorized (SigV4: grant `execute-api:Invoke` with {@link ReadApi.invokeStatement}), or
 * JWT-authorized with `apiJwtIssuer`, in front of one function that may Query and GetItem the
 * results table, BatchGetItem the messages table (a digest's activity) and Query its
 * `byPosition` index (the channel list), and Scan the channels table: nothing else, no write
 * anywhere. The one write route (a question's correction, POST) goes to a small function of its
 * own whose role may also PutItem the results table, and read only the answering message's
 * facts. Access logs (no path, no query string) go to their own log group; throttled at the
 * stage.
 */
export class ReadApi extends Construct {
  readonly function: PipelineFunction;
  /** The write route's function: the read function's role stays read-only. */
  readonly corrections: PipelineFunction;
  readonly api: HttpApi;

  constructor(scope: Construct, id: string, props: ReadApiProps) {
    super(scope, id);
    this.function = new PipelineFunction(this, "Handler", {
      entry: "functions/api/handler.ts",
      description: "convoseg read API: channels, topics, questions and segments, read-only",
      environment: {
        RESULTS_TABLE: props.storage.results.tableName,
        CHANNELS_TABLE: props.storage.channels.tableName,
        MESSAGES_TABLE: props.storage.messages.tableName,
        POWERTOOLS_SERVICE_NAME: "convoseg-api",
        // A JSON array: a name may hold what a separator would.
        ...(props.config.statsOptOut && {
          STATS_OPT_OUT: JSON.stringify(props.config.statsOptOut),
        }),
      },
      timeout: Duration.seconds(10),
      memorySize: props.search ? SEARCH_MEMORY.api : 512,
      logRetention: props.logRetention,
      ...searchFunctionProps(props.search),
    });
    // Hybrid queries embed the query's words with the index's model.
    props.search?.connect(this.function, "read", true);
    const role = this.function.role;
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ["dynamodb:Query", "dynamodb:GetItem"],
        resources: [props.storage.results.tableArn],
      }),
    );
    // The digest route reads the period's messages by id, for its activity: never their text.
    props.storage.grantActivityReads(role);
    // The channel list: each channel's first and latest arrivals, for its name, platform, times.
    props.storage.grantChannelFacts(role);
    role.addToPrincipalPolicy(
      new PolicyStatement({
        // Scan: the channels route; GetItem: whether a channel of an empty page exists at all.
        actions: ["dynamodb:Scan", "dynamodb:GetItem"],
        resources: [props.storage.channels.tableArn],
      }),
    );

    this.corrections = new PipelineFunction(this, "Corrections", {
      entry: "functions/api-correction/handler.ts",
      description: "convoseg API: a person's correction of a question, its one write route",
      environment: {
        RESULTS_TABLE: props.storage.results.tableName,
        MESSAGES_TABLE: props.storage.messages.tableName,
        POWERTOOLS_SERVICE_NAME: "convoseg-api-correction",
      },
      timeout: Duration.seconds(10),
      memorySize: 256,
      logRetention: props.logRetention,
    });
    props.storage.grantCorrections(this.corrections.role);

    const jwt = props.config.jwt;
    const authorizer =
      jwt === undefined
        ? new HttpIamAuthorizer()
        : new HttpJwtAuthorizer("Jwt", jwt.issuer, { jwtAudience: jwt.audience });
    this.api = new HttpApi(this, "Http", {
      description: "convoseg read API",
      defaultAuthorizer: authorizer,
      createDefaultStage: true,
    });
    const integration = new HttpLambdaIntegration("Handler", this.function.function);
    // The routes the handler serves (lib/outlets/api's one list): none answers 404 here alone.
    const methods = API_METHODS.map((method) => HttpMethod[method]);
    for (const path of API_ROUTES) this.api.addRoutes({ path, methods, integration });
    const writes = new HttpLambdaIntegration("Corrections", this.corrections.function);
    const writeMethods = API_WRITE_METHODS.map((method) => HttpMethod[method]);
    for (const path of API_WRITE_ROUTES) {
      this.api.addRoutes({ path, methods: writeMethods, integration: writes });
    }

    const accessLogs = new LogGroup(this, "AccessLogs", {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const stage = this.api.defaultStage?.node.defaultChild as CfnStage;
    stage.accessLogSettings = {
      destinationArn: accessLogs.logGroupArn,
      // The route key, never the path: a path names a channel and may carry anything.
      format: JSON.stringify({
        requestId: "$context.requestId",
        routeKey: "$context.routeKey",
        status: "$context.status",
        caller: "$context.identity.caller",
        latency: "$context.integrationLatency",
      }),
    };
    stage.defaultRouteSettings = { throttlingBurstLimit: 100, throttlingRateLimit: 50 };
  }

  /** What a caller's role needs to call every read route (IAM authorization). */
  invokeStatement(): PolicyStatement {
    return new PolicyStatement({
      actions: ["execute-api:Invoke"],
      resources: [this.api.arnForExecuteApi("GET"), this.api.arnForExecuteApi("HEAD")],
    });
  }

  /** What a caller's role needs to correct questions (IAM authorization): the write route only. */
  correctStatement(): PolicyStatement {
    return new PolicyStatement({
      actions: ["execute-api:Invoke"],
      resources: API_WRITE_ROUTES.map((path) => this.api.arnForExecuteApi("POST", path)),
    });
  }
}
